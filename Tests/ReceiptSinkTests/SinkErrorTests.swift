import Foundation
import ReceiptModel
import Testing

@testable import ReceiptSink

/// Output failures are codes with the file they concern; callers switch on the code, users read the message.
@Suite struct SinkErrorTests {
    /// What a caller does with each code; a switch without `default`, so a new code must be placed here.
    private static func remedy(_ e: SinkError) -> String {
        switch e.code {
        case .diskFull: return "free space"
        case .permissionDenied, .notADirectory, .inputInTheWay: return "fix --out"
        case .folderClaimed: return "wait"
        case .parquetToStandardOutput, .tooManyParts: return "change the options"
        case .resumeMismatch, .unknownFormat: return "start over"
        case .systemFailure, .compressorUnavailable, .compressionLevelRejected, .compressionFailed, .cannotRender,
            .history, .internalError:
            return "report"
        }
    }

    private static func tempDir(_ tag: String) throws -> String {
        let dir = "/tmp/receiptflow-sinkerror-\(getpid())-\(tag)"
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func theSystemsErrorNumberPicksTheCode() {
        #expect(SinkError.system(.write, "/o/r.csv", errno: ENOSPC).code == .diskFull)
        #expect(SinkError.system(.sync, "/o/r.csv", errno: EDQUOT).code == .diskFull)
        #expect(SinkError.system(.create, "/o/r.csv", errno: EACCES).code == .permissionDenied)
        #expect(SinkError.system(.create, "/o/r.csv", errno: EROFS).code == .permissionDenied)
        #expect(SinkError.system(.rename(to: "/o/r.csv"), "/o/.r.csv.1.tmp", errno: EISDIR).code == .systemFailure)
        let e = SinkError.system(.write, "/o/r.csv", errno: EIO)
        #expect(e.errno == EIO)
        #expect(e.reason == String(cString: strerror(EIO)))
        #expect(e.path == "/o/r.csv")
        #expect(!e.isDiskFull)
        #expect(Self.remedy(e) == "report")
    }

    /// Writing to `/dev/full` fails as a full disk does (ENOSPC).
    @Test func aFullDiskIsDiskFullAndSaysSo() throws {
        let fd = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(fd >= 0, "no /dev/full here")
        defer { close(fd) }
        let sink = try makeStreamSink(format: .csv, fileDescriptor: fd)
        var batch = ColumnBatch(sequence: 0)
        appendReceiptRow(&batch.receipts, line: 1, bundle: "com.a")
        let error = #expect(throws: SinkError.self) { try sink.write(batch) }
        let e = try #require(error)
        #expect(e.code == .diskFull && e.isDiskFull)
        #expect(e.operation == .write)
        #expect(e.errno == ENOSPC)
        #expect(Self.remedy(e) == "free space")
        #expect(
            e.message
                == "the disk holding the output is full: cannot write standard output: \(String(cString: strerror(ENOSPC)))"
                + "; free space there or give another --out")
    }

    /// A table file that cannot be renamed into place (a folder holds its name) names the rename and both paths.
    @Test func aFailedRenameSaysWhereTo() throws {
        let dir = try Self.tempDir("rename")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sink = try makeSink(format: .csv, directory: dir, metadata: RunMetadata())
        try FileManager.default.createDirectory(atPath: dir + "/receipts.csv/inside", withIntermediateDirectories: true)
        let error = #expect(throws: SinkError.self) { try sink.finish() }
        let e = try #require(error)
        #expect(e.code == .systemFailure)
        #expect(e.operation == .rename(to: dir + "/receipts.csv"))
        let temp = try #require(e.path)
        #expect(temp.hasPrefix(dir + "/.receipts.csv.") && temp.hasSuffix(".tmp"))
        #expect(e.message == "cannot rename to \(dir)/receipts.csv: \(temp): \(e.reason ?? "?")")
        sink.abort()
    }

    @Test func anExistingFileIsNotADirectory() throws {
        let dir = try Self.tempDir("notdir")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/plain-file"
        try #require(FileManager.default.createFile(atPath: file, contents: Data()))
        let error = #expect(throws: SinkError.self) { try makeDirectory(file) }
        #expect(error == SinkError(.notADirectory, path: file))
        #expect(error?.message == "cannot use \(file) as the output directory: it exists and is not a directory")
    }

    @Test func aLockedFolderIsClaimed() throws {
        let dir = try Self.tempDir("lock")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try OutputLock(directory: dir)
        defer { first.release() }
        // The holder is this process, which the message does not name as another one.
        let error = #expect(throws: SinkError.self) { _ = try OutputLock(directory: dir) }
        #expect(error == SinkError(.folderClaimed, path: dir))
        #expect(
            error?.message
                == "another receiptflow is writing \(dir) (another process holds its lock); wait for it to end or "
                + "stop it, or give another --out")
    }

    @Test func parquetToStandardOutputIsItsOwnCode() {
        let error = #expect(throws: SinkError.self) { _ = try makeStreamSink(format: .parquet) }
        #expect(error?.code == .parquetToStandardOutput)
        #expect(error.map(Self.remedy) == "change the options")
    }

    @Test func eachCodesMessage() {
        let cases: [(SinkError, String)] = [
            (
                SinkError(.permissionDenied, operation: .create, path: "/o/.r.csv.1.tmp", reason: "Permission denied"),
                "cannot create /o/.r.csv.1.tmp: Permission denied"
            ),
            (
                SinkError(.systemFailure, operation: .syncFolder, path: "/o", reason: "Input/output error"),
                "cannot sync the folder /o: Input/output error"
            ),
            (
                SinkError(.systemFailure, operation: .removeFolder, path: "/o/receipts", reason: "Busy"),
                "cannot remove the folder /o/receipts: Busy"
            ),
            (
                SinkError(.systemFailure, operation: .createOutputFolder, path: "/o", reason: "Not a directory"),
                "cannot create the output directory /o: Not a directory"
            ),
            (
                SinkError(.folderClaimed, path: "/o", value: "42"),
                "another receiptflow is writing /o (process 42 holds its lock); wait for it to end or stop it, or "
                    + "give another --out"
            ),
            (
                SinkError(.parquetToStandardOutput),
                "Parquet cannot be written to standard output; give a directory to --out, or use --format csv or ndjson"
            ),
            (SinkError(.compressorUnavailable), "cannot create a zstd compression context (out of memory?)"),
            (
                SinkError(.compressionLevelRejected, reason: "Parameter is out of bound", value: "99"),
                "zstd rejects compression level 99: Parameter is out of bound"
            ),
            (SinkError(.compressionFailed, reason: "Allocation error"), "zstd compression failed: Allocation error"),
            (
                SinkError(.tooManyParts, value: "100000"),
                "a run in parts has at most 100000 parts; start over with a larger --part-records"
            ),
            (
                SinkError(.resumeMismatch, path: "/o/receipts/part-00001.csv", value: "/o"),
                "/o/receipts/part-00001.csv is listed in manifest.json but missing; the output was changed after the "
                    + "run: remove /o and export again"
            ),
            (SinkError(.unknownFormat, value: "xlsx"), "the manifest names an unknown format 'xlsx'"),
            (
                SinkError(.cannotRender, path: "manifest.json", detail: "cannot render the manifest: x"),
                "cannot render the manifest: x"
            ),
            (SinkError(.history, detail: "the history spill is damaged (x)"), "the history spill is damaged (x)"),
            (
                SinkError(.internalError, detail: "nothing staged as summary.json"),
                "internal error: nothing staged as summary.json"
            ),
            (SinkError(.diskFull, path: "/o/.h", detail: "the disk is full: h"), "the disk is full: h"),
        ]
        for (error, expected) in cases {
            #expect(error.message == expected)
            #expect(error.description == expected)
        }
    }

    @Test func committingAnEmptyUnitIsAnInternalError() throws {
        let staged = try Self.tempDir("unit")
        defer { try? FileManager.default.removeItem(atPath: staged) }
        #expect(throws: SinkError(.internalError, detail: "nothing staged as \(CommitUnit.marker)")) {
            try CommitUnit(directory: staged).commit()
        }
    }
}
