import Foundation
import ReceiptHistory
import ReceiptModel
import ReceiptSink
import Testing

/// The collector's finish when the purchases spilled: its partitions reduced on several threads.
@Suite struct HistoryCollectorTests {
    /// 240 accounts of up to four monthly periods each, seen again by later receipts, in small shuffled batches so
    /// that the purchases spill after each at the smallest budget.
    static func receipts() -> [Receipt] {
        var receipts: [Receipt] = []
        for i in 0..<1_200 {
            let account = i % 240
            let entries = (0...(i % 4)).map { k in
                Entry(
                    transactionID: "\(account)-\(k)", originalTransactionID: "\(account)",
                    purchase: day(Int64(k) * 30), expires: day(Int64(k) * 30 + 30),
                    cancellation: account % 11 == 0 && k == 3 ? day(100) : nil)
            }
            receipts.append(Receipt(line: Int64(i + 1), created: Int64(i % 90), entries: entries))
        }
        return receipts
    }

    static func batches() -> [(ColumnBatch, Int)] {
        let receipts = Self.receipts()
        var rng = Random(seed: 7)
        let order = receipts.shuffled(using: &rng)
        return stride(from: 0, to: order.count, by: 17).map { (batch(Array(order[$0..<min(order.count, $0 + 17)])), 0) }
    }

    @Test("a spilling finish on several threads writes the tables of one thread")
    func severalThreadsWriteTheTablesOfOne() throws {
        let batches = Self.batches()
        let (one, oneDir) = try runHistory(batches, memoryBudget: 1, threads: 1)
        defer { try? FileManager.default.removeItem(atPath: oneDir) }
        #expect(one.result.spilledBytes > 0)
        let ids = Set(Self.receipts().flatMap { $0.entries.map(\.transactionID) })
        #expect(one.purchases.count == ids.count)
        for threads in [2, 3, 8] {
            let (many, dir) = try runHistory(batches, memoryBudget: 1, threads: threads)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            #expect(many.result.spilledBytes > 0, "\(threads) threads")
            #expect(many.purchasesCSV == one.purchasesCSV, "\(threads) threads")
            #expect(many.subscriptionsCSV == one.subscriptionsCSV, "\(threads) threads")
            #expect(many.eventsCSV == one.eventsCSV, "\(threads) threads")
            #expect(many.dailyCSV == one.dailyCSV, "\(threads) threads")
        }
    }

    @Test("a damaged spill partition stops a finish on several threads with its error, and the spill is removed")
    func damagedPartitionStopsTheFinish() throws {
        let dir = temporaryDirectory("damaged")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let collector = HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: false, memoryBudget: 1)
        collector.threads = 4
        for (b, input) in Self.batches() { try collector.add(b, input: input) }
        let fm = FileManager.default
        let segment = try #require(
            try fm.contentsOfDirectory(atPath: collector.spillRoot).first { $0.hasPrefix(".segment-") })
        let partition = collector.spillRoot + "/" + segment + "/p-021.run"
        #expect(fm.fileExists(atPath: partition))
        // A block header whose record count is zero.
        try Data(repeating: 0, count: 8).write(to: URL(fileURLWithPath: partition))
        do {
            _ = try collector.finish(asOf: nil, format: .csv, metadata: RunMetadata())
            Issue.record("the damaged partition was not noticed")
        } catch {
            #expect(error.code == .spillDamaged, "\(error)")
            #expect(error.path == partition, "\(error)")
        }
        collector.removeSpill()
        #expect(!fm.fileExists(atPath: collector.spillRoot))
        #expect(!fm.fileExists(atPath: dir + "/purchases.csv"))
    }
}
