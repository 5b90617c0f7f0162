import Foundation
import ReceiptModel
import ReceiptPipeline
import Testing

@Suite struct ManifestLogTests {
    private static func tempDir() throws -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("rf-manifest-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d.path
    }

    /// `m` with one more part of `records` receipts after its last, as a committing run adds it.
    private static func addPart(_ m: inout PartManifest, records: Int = 250) {
        let index = (m.parts.last?.index ?? -1) + 1
        let start = m.parts.last?.end ?? InputPosition(source: 0, line: 0)
        let end = InputPosition(source: 0, line: start.line + records)
        let c = PartManifestTests.counts(records: records, valid: records - 3, code: .invalidJSON)
        m.parts.append(
            PartEntry(
                index: index,
                files: ["receipts/part-\(index).csv", "transactions/part-\(index).csv", "renewals/part-\(index).csv"],
                start: start, end: end, firstRecord: m.records, records: records, transactions: c.transactions,
                counts: StoredCounts(c), history: ".receiptflow-history/part-\(index)"))
        m.resume = ResumePoint(position: end, sourceBytes: 100 * end.line)
        m.elapsedSeconds += 0.25
        m.chainCacheHits += records
    }

    /// Commits `n` parts through a store; the bytes it wrote after each commit.
    private static func commit(_ n: Int, in dir: String) throws -> (ManifestStore, PartManifest, [Int]) {
        let store = ManifestStore(directory: dir)
        var m = PartManifest(identity: PartManifestTests.identity(), partRecords: 250)
        try store.rewrite(m)
        var written: [Int] = []
        for _ in 0..<n {
            addPart(&m)
            try store.commit(m)
            written.append(store.bytesWritten)
        }
        return (store, m, written)
    }

    @Test func aThousandCommitsWriteBytesInProportionToTheirNumber() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (store, m, written) = try Self.commit(1000, in: dir)
        #expect(try PartManifest.load(from: dir) == m)
        // One entry's share of the manifest: what a commit must cost, whatever the parts before it.
        let entry = Double(try m.encoded().count) / 1000
        // Per commit, averaged over the first 250 and over all 1,000: the same within the compactions' share (a
        // manifest rewritten at every commit costs 4 times as much per commit at 1,000 parts as at 250).
        let early = Double(written[249]) / 250
        let late = Double(written[999]) / 1000
        #expect(late < 1.6 * early, "bytes per commit: \(early) over 250 parts, \(late) over 1,000")
        #expect(late < 4 * entry, "bytes per commit \(late), one entry \(entry)")
        // Whole rewrites double the log's reach: a handful, not one per part.
        #expect(store.rewrites <= 8, "\(store.rewrites) rewrites")
        // Between compactions, a commit appends one line of about one entry's size.
        let appends = zip(written.dropFirst(), written).map { $0 - $1 }.filter { Double($0) < 3 * entry }
        #expect(appends.count >= 990 && appends.allSatisfy { Double($0) < 1.5 * entry }, "\(appends.max() ?? 0)")
    }

    @Test func aTornLastEntryIsIgnoredAndTheNextRewriteRemovesIt() throws {
        for cut in [1, 17, 60, -1] {
            let dir = try Self.tempDir()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let (_, m, _) = try Self.commit(10, in: dir)
            let log = URL(fileURLWithPath: dir).appendingPathComponent(ManifestStore.logName)
            let whole = try Data(contentsOf: log)
            // The next part's entry, cut short as a kill during its append leaves it (-1: all but the newline).
            var next = m
            Self.addPart(&next)
            let line = try Self.logLine(of: next)
            let torn = cut < 0 ? line.dropLast() : line.prefix(cut)
            try (whole + torn).write(to: log)
            #expect(try PartManifest.load(from: dir) == m, "cut \(cut)")
            try ManifestStore(directory: dir).rewrite(m)
            #expect(try Data(contentsOf: log).isEmpty)
            #expect(try PartManifest.load(from: dir) == m)
        }
    }

    @Test func aDamagedEntryBeforeTheLastOrPartsOutOfOrderMakeTheManifestUnreadable() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (_, _, _) = try Self.commit(5, in: dir)
        let log = URL(fileURLWithPath: dir).appendingPathComponent(ManifestStore.logName)
        let lines = try Data(contentsOf: log).split(separator: UInt8(ascii: "\n"))
        var damaged = lines
        damaged[2] = Data("{\"part\":".utf8)
        try Data(damaged.joined(separator: [UInt8(ascii: "\n")]) + [UInt8(ascii: "\n")]).write(to: log)
        #expect(throws: ManifestError.self) { try PartManifest.load(from: dir) }
        var skipped = lines
        skipped.remove(at: 1)
        try Data(skipped.joined(separator: [UInt8(ascii: "\n")]) + [UInt8(ascii: "\n")]).write(to: log)
        #expect(throws: ManifestError.self) { try PartManifest.load(from: dir) }
    }

    @Test func entriesAManifestAlreadyHoldsAreSkipped() throws {
        // A crash after a compaction's manifest was renamed into place but before the log was emptied.
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (_, m, _) = try Self.commit(7, in: dir)
        let log = URL(fileURLWithPath: dir).appendingPathComponent(ManifestStore.logName)
        let kept = try Data(contentsOf: log)
        try m.write(to: dir)
        #expect(try PartManifest.load(from: dir) == m)
        var more = m
        Self.addPart(&more)
        try (kept + Self.logLine(of: more)).write(to: log)
        #expect(try PartManifest.load(from: dir) == more)
    }

    /// The log line a store appends for the last part of `m`.
    private static func logLine(of m: PartManifest) throws -> Data {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var base = m
        base.parts.removeLast()
        let store = ManifestStore(directory: dir)
        try store.rewrite(base)
        try store.commit(m)
        let line = try Data(contentsOf: URL(fileURLWithPath: dir).appendingPathComponent(ManifestStore.logName))
        #expect(line.last == UInt8(ascii: "\n") && line.filter { $0 == UInt8(ascii: "\n") }.count == 1)
        return line
    }
}
