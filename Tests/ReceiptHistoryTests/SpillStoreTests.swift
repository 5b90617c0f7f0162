import Foundation
import Testing

@testable import ReceiptHistory

/// A record keyed by a number, with a payload that makes the store spill early and a count that merging adds up.
struct NumberedRecord: SpillRecord, Equatable {
    var key: Int64
    var count: Int64
    var payload: [UInt8]

    var storeKey: Int64 { key }
    mutating func merge(_ other: NumberedRecord) { count += other.count }
    var estimatedBytes: Int { 64 + payload.count }

    func partition(_ count: Int, seed: UInt64) -> Int {
        let bytes = withUnsafeBytes(of: key.littleEndian) { Array($0) }
        return Int(stableHash(bytes, seed: seed) % UInt64(count))
    }

    static func precedes(_ a: NumberedRecord, _ b: NumberedRecord) -> Bool { a.key < b.key }

    func encode(into w: inout SpillWriter) {
        w.i64(key)
        w.i64(count)
        w.text(payload)
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> NumberedRecord {
        NumberedRecord(key: try r.i64(), count: try r.i64(), payload: try r.text())
    }
}

/// The spill store's merge: in passes of a bounded fan-in, with the rows of a single merge. (That a run needs few
/// descriptors is tested end to end under `ulimit -n 64`, in a process of its own.)
@Suite struct SpillStoreTests {
    /// 6,000 keys, each added `1 + key % 3` times: about 5 MB of estimated bytes, far over the smallest budget
    /// (64 KB), so every partition is split again and the reduce makes hundreds of sorted runs.
    static let keys = 6_000
    static func adds() -> [NumberedRecord] {
        var out: [NumberedRecord] = []
        for k in 0..<keys {
            for _ in 0...(k % 3) {
                // A scattered order, so that runs interleave.
                let key = Int64((k * 7_919) % keys)
                out.append(NumberedRecord(key: key, count: 1, payload: Array(repeating: UInt8(key & 0xFF), count: 700)))
            }
        }
        return out
    }

    /// What the store must emit: one record per key, counts added up, in key order.
    static func expected() -> [NumberedRecord] {
        var byKey: [Int64: NumberedRecord] = [:]
        for r in adds() { byKey[r.key, default: NumberedRecord(key: r.key, count: 0, payload: r.payload)].count += 1 }
        return byKey.values.sorted { $0.key < $1.key }
    }

    static func reduce(fanIn: Int?, threads: Int = 1, damage partition: Int? = nil) throws -> (
        rows: [NumberedRecord], spilled: Int64, leftover: [String]
    ) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rf-spill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = SpillStore<NumberedRecord>(
            segment: root + "/segment", workDirectory: root + "/work", budget: 1 << 16, fanIn: fanIn)
        store.threads = threads
        for r in adds() { try store.add(r) }
        if let partition {
            // A block header whose record count is zero: the partition's reduce finds the file damaged.
            let path = root + "/segment/" + SpillStore<NumberedRecord>.partitionName(partition)
            try Data(repeating: 0, count: SpillFormat.headerBytes).write(to: URL(fileURLWithPath: path))
        }
        var rows: [NumberedRecord] = []
        try store.reduce { r throws(HistoryError) in rows.append(r) }
        let leftover = (try? FileManager.default.contentsOfDirectory(atPath: root + "/work")) ?? []
        return (rows, store.spilledBytes, leftover)
    }

    @Test func mergesInPassesOfATinyFanInGiveTheRowsOfOneMerge() throws {
        let want = Self.expected()
        let onePass = try Self.reduce(fanIn: 1 << 20)
        #expect(onePass.rows == want)
        for fanIn in [2, 3, 16] {
            let passes = try Self.reduce(fanIn: fanIn)
            #expect(passes.rows == want, "fan-in \(fanIn)")
            // The extra passes wrote the spilled bytes again: more runs than the fan-in were there to merge.
            #expect(passes.spilled > onePass.spilled, "fan-in \(fanIn)")
            #expect(passes.leftover.isEmpty, "fan-in \(fanIn): \(passes.leftover)")
        }
    }

    @Test func reducingThePartitionsOnSeveralThreadsGivesTheRowsOfOneThread() throws {
        let want = Self.expected()
        let one = try Self.reduce(fanIn: nil, threads: 1)
        #expect(one.rows == want)
        for threads in [2, 4, 7] {
            // Each thread has a share of the budget, so partitions split further; the rows stay those of one merge.
            let many = try Self.reduce(fanIn: nil, threads: threads)
            #expect(many.rows == want, "\(threads) threads")
            #expect(many.leftover.isEmpty, "\(threads) threads: \(many.leftover)")
        }
        // Merges in passes over the runs of several threads too.
        #expect(try Self.reduce(fanIn: 3, threads: 4).rows == want)
    }

    @Test func aDamagedPartitionStopsAReduceOnSeveralThreadsWithItsError() throws {
        for threads in [1, 2, 4] {
            do {
                _ = try Self.reduce(fanIn: nil, threads: threads, damage: 37)
                Issue.record("\(threads) threads: the damaged partition was not noticed")
            } catch let error as HistoryError {
                #expect(error.code == .spillDamaged, "\(threads) threads: \(error)")
                #expect(error.path?.hasSuffix("/segment/p-037.run") == true, "\(threads) threads: \(error)")
            }
        }
    }

    @Test func aLargeSpillOnSeveralThreadsWritesTheFilesOfOneThread() throws {
        // Distinct keys, more than the least count spilled on several threads.
        let records = (0..<20_000).map {
            NumberedRecord(
                key: Int64($0 * 7_919 % 20_000), count: 1, payload: Array(repeating: UInt8($0 & 0xFF), count: 40))
        }
        #expect(records.count >= SpillStore<NumberedRecord>.parallelSpillMinimum)
        var files: [[String: Data]] = []
        var spilled: [(Int64, Int64)] = []
        for threads in [1, 2, 4] {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("rf-spill-\(UUID().uuidString)")
                .path
            defer { try? FileManager.default.removeItem(atPath: root) }
            let store = SpillStore<NumberedRecord>(
                segment: root + "/segment", workDirectory: root + "/work", budget: 1 << 30)
            store.threads = threads
            // Twice, so that each partition's file is appended to.
            try store.spill(records)
            try store.spill(records[0..<5_000])
            spilled.append((store.spilledBytes, store.spilledRecords))
            var byName: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: root + "/segment") {
                byName[name] = try Data(contentsOf: URL(fileURLWithPath: root + "/segment/" + name))
            }
            files.append(byName)
            var rows: [NumberedRecord] = []
            try store.reduce { r throws(HistoryError) in rows.append(r) }
            #expect(rows.count == 20_000, "\(threads) threads")
            let twice = Set(records[0..<5_000].map(\.key))
            #expect(rows.allSatisfy { $0.count == (twice.contains($0.key) ? 2 : 1) }, "\(threads) threads")
        }
        #expect(files[0].count == SpillStore<NumberedRecord>.partitionCount)
        #expect(files[1] == files[0] && files[2] == files[0])
        #expect(spilled[0].1 == 25_000 && spilled[1] == spilled[0] && spilled[2] == spilled[0])
    }

    @Test func aStoreThatHasSpilledWritesWhatItHoldsOutBeforeItsReduce() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rf-spill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = SpillStore<NumberedRecord>(
            segment: root + "/segment", workDirectory: root + "/work", budget: 1 << 20)
        for r in Self.adds() { try store.add(r) }
        let held = store.heldCount
        let written = store.spilledRecords
        #expect(store.hasSpilled && held > 0 && written > 0)
        var rows: [NumberedRecord] = []
        try store.reduce { r throws(HistoryError) in rows.append(r) }
        #expect(rows == Self.expected())
        // The segment's partitions (kept until the spill is removed) hold the records spilled during the adds and
        // those the store still held when the reduce began.
        let codec = try SpillBlockCodec()
        var inSegment = 0
        for p in 0..<SpillStore<NumberedRecord>.partitionCount {
            let path = root + "/segment/" + SpillStore<NumberedRecord>.partitionName(p)
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let scanner = try SpillScanner<NumberedRecord>(path: path, codec: codec)
            while try scanner.next() != nil { inSegment += 1 }
        }
        #expect(inSegment == Int(written) + held)
    }

    @Test func eachPassRewritesTheRunsOnceSoTheWorkGrowsWithTheLogarithmOfTheRuns() throws {
        // Every pass writes the merged bytes once; the bytes of the sorted runs are the same whatever the fan-in.
        let one = try Self.reduce(fanIn: 1 << 20).spilled
        let two = try Self.reduce(fanIn: 2).spilled
        let sixteen = try Self.reduce(fanIn: 16).spilled
        #expect(sixteen < two)
        // At most log2(runs) passes of about the data's size each: with under 2^12 runs, 12 passes.
        #expect(two - one < 12 * one)
    }

    @Test func theFanInIsTheDescriptorLimitLessThoseOpenAndAReserveWithinBounds() throws {
        #expect(DescriptorBudget.fanIn(limit: 64, open: 10) == 64 - 10 - DescriptorBudget.reserve)
        #expect(DescriptorBudget.fanIn(limit: 20, open: 10) == DescriptorBudget.minimumFanIn)
        #expect(DescriptorBudget.fanIn(limit: Int.max, open: 10) == DescriptorBudget.maximumFanIn)
        #expect(DescriptorBudget.fanIn(limit: nil, open: nil) == 256 - 64 - DescriptorBudget.reserve)
        // This process: a limit is readable, the descriptor folder lists at least standard input, output and error.
        #expect(try #require(DescriptorBudget.softLimit()) > 0)
        #expect(try #require(DescriptorBudget.openDescriptors()) >= 3)
        let fanIn = DescriptorBudget.mergeFanIn()
        #expect(fanIn >= DescriptorBudget.minimumFanIn && fanIn <= DescriptorBudget.maximumFanIn)
    }
}
