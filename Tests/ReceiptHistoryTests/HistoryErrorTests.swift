import Foundation
import ReceiptSink
import Testing

@testable import ReceiptHistory

/// History failures are codes with the file they concern; a full disk stays recognisable through the writer
/// stage, which reports the history's failures as its own.
@Suite struct HistoryErrorTests {
    /// What a caller does with each code; a switch without `default`, so a new code must be placed here.
    private static func remedy(_ e: HistoryError) -> String {
        switch e.code {
        case .diskFull: return "free space or --no-history"
        case .permissionDenied: return "fix --out"
        case .spillDamaged: return "start over"
        case .systemFailure, .output, .internalError, .other: return "report"
        }
    }

    @Test func theSystemsErrorNumberPicksTheCodeAndAFullDiskSaysWhatToDo() {
        errno = ENOSPC
        let full = HistoryError.system("cannot write the history spill", "/o/.receiptflow-history/p")
        #expect(full.code == .diskFull && full.isDiskFull)
        #expect(full.errno == ENOSPC)
        #expect(Self.remedy(full) == "free space or --no-history")
        #expect(
            full.message
                == "the disk holding the output is full: cannot write the history spill /o/.receiptflow-history/p: "
                + "\(String(cString: strerror(ENOSPC))). The purchase history spills to disk inside --out while it "
                + "merges; free space there (docs/history.md estimates the need) or export with --no-history")
        errno = EACCES
        let refused = HistoryError.system("cannot create the history spill file", "/o/.h/x")
        #expect(refused.code == .permissionDenied)
        #expect(refused.message == "cannot create the history spill file /o/.h/x: \(String(cString: strerror(EACCES)))")
        errno = EIO
        let failed = HistoryError.system("cannot rename the history spill to /o/.h/p-1:", "/o/.h/.segment-1")
        #expect(failed.code == .systemFailure)
        #expect(
            failed.message
                == "cannot rename the history spill to /o/.h/p-1: /o/.h/.segment-1: \(String(cString: strerror(EIO)))")
    }

    @Test func aRecordCutShortIsADamagedSpill() throws {
        let bytes: [UInt8] = [1, 2, 3]
        let error = bytes.withUnsafeBytes { p -> HistoryError? in
            var reader = SpillReader(p)
            do throws(HistoryError) {
                _ = try reader.i64()
                return nil
            } catch {
                return error
            }
        }
        let e = try #require(error)
        #expect(e.code == .spillDamaged)
        #expect(e.message == "the history spill is damaged (a record is cut short)")
        #expect(
            HistoryError(.spillDamaged, path: "/o/.h/p", detail: "it ends inside a record").message
                == "the history spill /o/.h/p is damaged (it ends inside a record)")
        #expect(Self.remedy(e) == "start over")
    }

    @Test func eachOtherCodesMessage() {
        #expect(
            HistoryError(.internalError, detail: "a transactions row of line 3 has no receipts row").message
                == "internal error: a transactions row of line 3 has no receipts row")
        #expect(HistoryError("the spill of part 2 is missing").message == "the spill of part 2 is missing")
        #expect(HistoryError("the spill of part 2 is missing").code == .other)
    }

    @Test func aTableWritersFailureKeepsItsCodeBothWays() {
        let full = SinkError.system(.write, "/o/purchases.csv", errno: ENOSPC)
        let wrapped = HistoryError(full)
        #expect(wrapped.code == .diskFull && wrapped.sink == full)
        #expect(wrapped.message == full.message)
        // The writer stage gets the table writer's own error back.
        #expect(SinkError(wrapped) == full)
        let other = HistoryError(SinkError.system(.sync, "/o/purchases.csv", errno: EIO))
        #expect(other.code == .output)
        #expect(SinkError(other).code == .systemFailure)
    }

    @Test func aHistoryFailureReachesTheWriterStageWithItsMessageAndDiskFullCode() {
        errno = EDQUOT
        let spill = HistoryError.system("cannot write the history spill", "/o/.h/p")
        let asSink = SinkError(spill)
        #expect(asSink.code == .diskFull)
        #expect(asSink.path == "/o/.h/p" && asSink.errno == EDQUOT)
        #expect(asSink.message == spill.message)
        let damaged = SinkError(HistoryError(.spillDamaged, detail: "a record is cut short"))
        #expect(damaged.code == .history)
        #expect(damaged.message == "the history spill is damaged (a record is cut short)")
    }

    @Test func aSpillFolderThatCannotBeCreatedIsNamedWithTheSystemsReason() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-history-error-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try ReceiptHistory.makeDirectory(dir + "/a/b")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: dir + "/a/b", isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        let file = dir + "/plain"
        try #require(FileManager.default.createFile(atPath: file, contents: Data()))
        let reason = String(cString: strerror(ENOTDIR))
        for path in [file, file + "/sub"] {
            let error = #expect(throws: HistoryError.self) { try ReceiptHistory.makeDirectory(path) }
            #expect(error?.code == .systemFailure && error?.errno == ENOTDIR)
            #expect(error?.message == "cannot create the history spill folder \(path): \(reason)")
        }
    }
}
