import Foundation
import ReceiptModel
import ReceiptSink
import Testing

@testable import ReceiptHistory

/// The compressed blocks of a history state's body (`StateBlocks`).
struct StateBlocksTests {
    /// Bytes shaped like state records: repeated ids, dates and names with some variety.
    private let records: [UInt8] = {
        var out: [UInt8] = []
        for i in 0..<20_000 {
            out += Array("com.example.app\u{0}\(100_000 + i * 7)\u{0}com.example.monthly\u{0}".utf8)
            withUnsafeBytes(of: Int64(1_700_000_000_000 + i * 86_400_000).littleEndian) { out += $0 }
        }
        return out
    }()

    /// The body's frame of one block (after its two sizes).
    private func frame(_ block: [UInt8]) -> (frame: [UInt8], size: Int) {
        let compressed = Int(block.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) })
        let size = Int(
            block.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) })
        #expect(block.count == 8 + compressed)
        return (Array(block[8...]), size)
    }

    @Test func aBlockIsWrittenAtTheWritersLevelAndReadsBack() throws {
        let block = try StateBlocks.compress(records)
        #expect(block == (try StateBlocks.compress(records, level: StateBlocks.level)))
        let (f, size) = frame(block)
        #expect(size == records.count)
        #expect(StateBlocks.decompress(f, size: size) == records)
        #expect(StateBlocks.decompress(f, size: size + 1) == nil)
    }

    @Test(arguments: [3, 19, -5])
    func aBlockWrittenAtAnotherLevelReadsBack(level: Int32) throws {
        let (f, size) = frame(try StateBlocks.compress(records, level: level))
        #expect(StateBlocks.decompress(f, size: size) == records)
    }

    /// `state`'s bytes with each body block compressed again at `level` (and the checksum made again), as a
    /// build writing at that level would have written it.
    private func recompressed(_ state: [UInt8], level: Int32) throws -> [UInt8] {
        var out = Array(state[0..<12])
        var at = 12
        func u32() -> Int {
            defer { at += 4 }
            return Int(
                state.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) })
        }
        while true {
            let compressed = u32()
            if compressed == 0 { break }
            let size = u32()
            let body = try #require(StateBlocks.decompress(Array(state[at..<(at + compressed)]), size: size))
            at += compressed
            out += try StateBlocks.compress(body, level: level)
        }
        out += [0, 0, 0, 0]
        #expect(at == state.count - 32)
        let digest = StateDigest()
        digest.update(out)
        return out + digest.finalize()
    }

    @Test func aStateWhoseBlocksWereCompressedAtLevelThreeContinuesAChainWithTheSameTables() throws {
        let first = batch(
            (0..<300).map { i in
                Receipt(
                    line: Int64(i + 1), created: day(Int64(40 + i % 5)),
                    entries: [
                        Entry(
                            transactionID: "\(i)a", originalTransactionID: "\(i)a", purchase: day(1), expires: day(31)),
                        Entry(
                            transactionID: "\(i)b", originalTransactionID: "\(i)a", purchase: day(31), expires: day(61)),
                    ])
            })
        let second = batch(
            (0..<300).map { i in
                Receipt(
                    line: Int64(i + 1), created: day(70),
                    entries: [
                        Entry(
                            transactionID: "\(i)c", originalTransactionID: "\(i)a", purchase: day(61), expires: day(91))
                    ])
            })
        let (_, dir) = try runHistory([(first, 0)], inputs: ["day1.ndjson"])
        let path = dir + "/" + HistoryStateFormat.fileName
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let older = try recompressed(written, level: 3)
        #expect(older != written)
        let olderDir = temporaryDirectory("older-state")
        try Data(older).write(to: URL(fileURLWithPath: olderDir + "/" + HistoryStateFormat.fileName))
        func chained(_ base: String) throws -> HistoryTables {
            let out = temporaryDirectory("chained")
            let state = try HistoryStateFile.open(base + "/" + HistoryStateFormat.fileName)
            let collector = HistoryCollector(
                directory: out, inputs: state.header.inputs + ["day2.ndjson"], resumable: false)
            collector.continueChain(state)
            try collector.add(second, input: 0)
            let result = try collector.finish(asOf: nil, format: .csv, metadata: RunMetadata())
            collector.removeSpill()
            func read(_ name: String) throws -> String {
                try String(contentsOfFile: out + "/\(name).csv", encoding: .isoLatin1)
            }
            return HistoryTables(
                purchasesCSV: try read("purchases"), subscriptionsCSV: try read("subscriptions"),
                eventsCSV: try read("events"), dailyCSV: try read("daily"), result: result)
        }
        let a = try chained(dir)
        let b = try chained(olderDir)
        #expect(a.result.purchases == 900)
        #expect(a.purchasesCSV == b.purchasesCSV)
        #expect(a.subscriptionsCSV == b.subscriptionsCSV)
        #expect(a.eventsCSV == b.eventsCSV)
        #expect(a.dailyCSV == b.dailyCSV)
    }
}
