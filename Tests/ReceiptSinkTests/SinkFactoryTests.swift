import Foundation
import ReceiptModel
import Testing

@testable import ReceiptSink

@Suite struct SinkFactoryTests {
    static func tempDir(_ tag: String) -> String {
        "/tmp/receiptflow-sinktests-\(getpidValue())-\(tag)/nested/out"
    }

    static func files(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    @Test(arguments: OutputFormat.allCases)
    func abortLeavesNoFileBehind(format: OutputFormat) throws {
        let dir = Self.tempDir("abort-\(format.rawValue)")
        let sink = try makeSink(format: format, directory: dir, metadata: RunMetadata())
        var batch = ColumnBatch(sequence: 0)
        appendReceiptRow(&batch.receipts, line: 1, bundle: "com.a")
        batch.ndjson = Array("{\"status\":0}\n".utf8)
        try sink.write(batch)
        #expect(!Self.files(dir).isEmpty)  // the temporary files exist while writing...
        #expect(Self.files(dir).allSatisfy { $0.hasPrefix(".") && $0.hasSuffix(".tmp") })
        sink.abort()
        #expect(Self.files(dir).isEmpty)  // ...and are gone after abort
    }

    @Test(arguments: OutputFormat.allCases)
    func finishRenamesIntoTheFinalNames(format: OutputFormat) throws {
        let dir = Self.tempDir("finish-\(format.rawValue)")
        let sink = try makeSink(format: format, directory: dir, metadata: RunMetadata())
        try sink.finish()
        let ext = format.fileExtension
        let expected =
            format == .ndjson ? ["receipts.ndjson"] : ["receipts.\(ext)", "renewals.\(ext)", "transactions.\(ext)"]
        #expect(Self.files(dir) == expected)
    }

    /// `ParquetSink.finish` completes the two files on two threads: when either cannot be renamed into place (a
    /// folder holds its name), finish throws that file's error and leaves no temporary file; the other file,
    /// completed meanwhile, is in place, as it was when the files were completed one after the other.
    @Test(arguments: ["receipts", "transactions"])
    func aFailedParquetFinishSaysWhichFileAndLeavesNoTemporaryFile(blocked: String) throws {
        let dir = Self.tempDir("finish-fails-\(blocked)")
        try? FileManager.default.removeItem(atPath: dir)
        let sink = try makeSink(format: .parquet, directory: dir, metadata: RunMetadata())
        var batch = ColumnBatch(sequence: 0)
        appendReceiptRow(&batch.receipts, line: 1, bundle: "com.a")
        try sink.write(batch)
        // rename(2) of a file onto a non-empty folder fails (EISDIR or ENOTEMPTY).
        try FileManager.default.createDirectory(
            atPath: "\(dir)/\(blocked).parquet/inside", withIntermediateDirectories: true)
        let error = #expect(throws: SinkError.self) { try sink.finish() }
        #expect(error?.description.contains("\(blocked).parquet") == true, "\(error?.description ?? "no error")")
        let other = blocked == "receipts" ? "transactions" : "receipts"
        // The renewals file is completed after the transactions file, on the same thread: it is in place when
        // the transactions file was.
        let completed = blocked == "receipts" ? [other, "renewals"] : [other]
        let expected = (completed + [blocked]).map { "\($0).parquet" }.sorted()
        #expect(Self.files(dir) == expected)
        sink.abort()
        #expect(Self.files(dir) == expected)
    }

    @Test func ndjsonSinkRefusesABatchWhoseLinesDoNotMatchItsRows() throws {
        let dir = Self.tempDir("ndjson-mismatch")
        let sink = try makeSink(format: .ndjson, directory: dir, metadata: RunMetadata())
        var batch = ColumnBatch(sequence: 3)
        appendReceiptRow(&batch.receipts, line: 1, bundle: nil)
        appendReceiptRow(&batch.receipts, line: 2, bundle: nil)
        batch.ndjson = Array("{\"status\":0}\n".utf8)
        #expect(throws: SinkError.self) { try sink.write(batch) }
        sink.abort()
    }

    @Test func parquetCannotStreamToStandardOutput() {
        #expect(throws: SinkError.self) { _ = try makeStreamSink(format: .parquet) }
    }

    @Test func anExistingFileIsNotAnOutputDirectory() throws {
        let dir = Self.tempDir("notdir")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/plain-file"
        try #require(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(throws: SinkError.self) { _ = try makeSink(format: .csv, directory: file, metadata: RunMetadata()) }
    }
}
