import Foundation
import ReceiptSink
import Testing

@Suite struct ProtectedFilesTests {
    /// A folder holding `input.ndjson`, which is protected. The file is never removed: a protected inode freed and
    /// reused by another test's file would protect that file too.
    private static func folder() throws -> (dir: URL, input: URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-protected-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("input.ndjson")
        try Data("{\"id\":\"a\"}\n".utf8).write(to: input)
        ProtectedFiles.protect([input.path])
        return (dir, input)
    }

    @Test func noWriterReplacesOrRemovesAProtectedFileWhateverItsNameInTheFolder() throws {
        let (dir, input) = try Self.folder()
        let bytes = try Data(contentsOf: input)
        // The input under output names: a hard link, a symbolic link, and the file itself.
        try FileManager.default.linkItem(at: input, to: dir.appendingPathComponent("receipts.csv"))
        try FileManager.default.createSymbolicLink(
            at: dir.appendingPathComponent("summary.json"), withDestinationURL: input)
        try FileManager.default.linkItem(at: input, to: dir.appendingPathComponent(".manifest.json.\(getpid()).tmp"))
        for name in ["receipts.csv", "summary.json", "input.ndjson", "manifest.json"] {
            #expect(throws: SinkError.self, "\(name)") {
                try replaceFileDurably(directory: dir.path, name: name, bytes: Array("new\n".utf8))
            }
        }
        for name in ["receipts.csv", "summary.json", "input.ndjson"] {
            #expect(throws: SinkError.self, "\(name)") { try OutputFolder.remove(name, in: dir.path) }
        }
        // A unit checks when a file is staged and again at commit: the input may have come into the way since.
        #expect(throws: SinkError.self) {
            try CommitUnit(directory: dir.path).stage(name: "summary.json", bytes: Array("{}\n".utf8))
        }
        let sub = dir.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let unit = CommitUnit(directory: sub.path)
        try unit.stage(name: "renewals.csv", bytes: Array("r\n".utf8))
        try unit.stage(name: "summary.json", bytes: Array("{}\n".utf8))
        try FileManager.default.linkItem(at: input, to: sub.appendingPathComponent("renewals.csv"))
        do {
            try unit.commit()
            Issue.record("the commit replaced the input's hard link")
        } catch {
            #expect(error.code == .inputInTheWay && error.message.contains(input.path), "\(error.message)")
        }
        #expect(try Data(contentsOf: input) == bytes)
        #expect(ProtectedFiles.input(at: dir.appendingPathComponent("receipts.csv").path) == input.path)
        // Other files in the folder are written as usual.
        try replaceFileDurably(directory: dir.path, name: "transactions.csv", bytes: Array("x\n".utf8))
        #expect(ProtectedFiles.input(at: dir.appendingPathComponent("transactions.csv").path) == nil)
    }
}
