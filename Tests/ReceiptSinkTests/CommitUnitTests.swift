import Foundation
import ReceiptModel
import Testing

@testable import ReceiptSink

/// The commit unit: staged files stay invisible until `commit`, which renames them with `summary.json` last and
/// removes the earlier run's files it is told to; `discard` leaves the folder as it was.
@Suite struct CommitUnitTests {
    static func folder(_ tag: String) throws -> String {
        let d = "/tmp/receiptflow-commitunit-\(getpid())-\(tag)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    static func listing(_ dir: String) -> [String: String] {
        var out: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            let data = FileManager.default.contents(atPath: dir + "/" + name) ?? Data()
            out[name] = String(decoding: data, as: UTF8.self)
        }
        return out
    }

    static func batch() -> ColumnBatch {
        var batch = ColumnBatch(sequence: 0)
        appendReceiptRow(&batch.receipts, line: 1, bundle: "com.a")
        batch.ndjson = Array("{\"status\":0}\n".utf8)
        return batch
    }

    @Test(arguments: OutputFormat.allCases)
    func tablesAppearOnlyAtCommitWithTheSummaryAndStaleFilesGo(format: OutputFormat) throws {
        let dir = try Self.folder("commit-\(format.rawValue)")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // An earlier run in another format, and a file that is not ours.
        let earlier = ["receipts.xyz": "old", "summary.json": "{\"old\":1}\n", "notes.txt": "mine"]
        for (name, text) in earlier { try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/" + name)) }
        let unit = CommitUnit(directory: dir)
        let sink = try makeSink(format: format, directory: dir, metadata: RunMetadata(), unit: unit)
        try sink.write(Self.batch())
        try sink.finish()
        try unit.stage(name: CommitUnit.marker, bytes: Array("{\"new\":1}\n".utf8))
        // Finished and staged, but nothing under a final name has changed.
        let staged = Self.listing(dir)
        for (name, text) in earlier { #expect(staged[name] == text, "\(name)") }
        #expect(
            staged.keys.filter { !earlier.keys.contains($0) }.allSatisfy { $0.hasPrefix(".") && $0.hasSuffix(".tmp") })
        #expect(Set(unit.stagedNames) == Set(OutputFolder.tableFiles(format) + ["summary.json"]))

        try unit.commit(removing: ["receipts.xyz", "summary.json"])
        let after = Self.listing(dir)
        #expect(Set(after.keys) == Set(OutputFolder.tableFiles(format) + ["summary.json", "notes.txt"]))
        #expect(after["summary.json"] == "{\"new\":1}\n")
        #expect(after["notes.txt"] == "mine")
    }

    @Test func discardLeavesTheFolderAsItWas() throws {
        let dir = try Self.folder("discard")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("{\"old\":1}\n".utf8).write(to: URL(fileURLWithPath: dir + "/summary.json"))
        try Data("old".utf8).write(to: URL(fileURLWithPath: dir + "/receipts.csv"))
        let before = Self.listing(dir)
        let unit = CommitUnit(directory: dir)
        let sink = try makeSink(format: .csv, directory: dir, metadata: RunMetadata(), unit: unit)
        try sink.write(Self.batch())
        try sink.finish()
        unit.discard()
        #expect(Self.listing(dir) == before)
        // Without a staged summary.json there is nothing to commit.
        let empty = CommitUnit(directory: dir)
        #expect(throws: SinkError.self) { try empty.commit() }
        #expect(Self.listing(dir) == before)
    }

    @Test func temporariesOfAKilledRunAreRecognisedAndOnlyThose() throws {
        let dir = try Self.folder("temporaries")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let names = [
            ".receipts.csv.123.tmp", ".transactions.parquet.9.tmp", ".summary.json.77.tmp", ".summary.json.tmp-5",
            ".manifest.json.4.tmp", ".notes.txt.1.tmp", "receipts.csv", ".hidden",
        ]
        for n in names { try Data().write(to: URL(fileURLWithPath: dir + "/" + n)) }
        let removed = try OutputFolder.removeTemporaries(in: dir)
        #expect(Set(removed) == Set(names.prefix(5)))
        #expect(Set(Self.listing(dir).keys) == [".notes.txt.1.tmp", "receipts.csv", ".hidden"])
    }
}
