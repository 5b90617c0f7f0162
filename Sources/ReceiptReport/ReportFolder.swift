import Foundation
import ReceiptModel
import ReceiptSink

/// `report.html` of a finished run's folder: read from its `summary.json` (which must be there: a folder without
/// it holds no complete run) and its `report-data.json` when present, written durably beside them.
public enum ReportFolder {
    /// The page's name in the output folder.
    public static let fileName = "report.html"

    /// The page of the run in `directory`.
    public static func page(of directory: String) throws(ReportError) -> ReportPage {
        let summaryPath = join(directory, CommitUnit.marker)
        guard let summary = FileManager.default.contents(atPath: summaryPath) else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else { throw ReportError(.notAFolder, path: directory) }
            throw ReportError(.notACompleteRun, path: directory)
        }
        guard let facts = RunFacts(summary: Array(summary)) else {
            throw ReportError(.unreadableSummary, path: summaryPath)
        }
        var data: ReportData? = nil
        let dataPath = join(directory, ReportData.fileName)
        if let bytes = FileManager.default.contents(atPath: dataPath) {
            guard let d = ReportData(json: Array(bytes)) else { throw ReportError(.unreadableData, path: dataPath) }
            data = d
        }
        let modified = (try? FileManager.default.attributesOfItem(atPath: summaryPath))?[.modificationDate] as? Date
        return ReportPage(facts: facts, data: data, committedAt: modified.map(committedText))
    }

    /// Writes `report.html` of the run in `directory` (temporary name, sync, rename), holding the folder's lock
    /// so that no export changes the run meanwhile; its path.
    @discardableResult
    public static func write(in directory: String) throws(ReportError) -> String {
        _ = try page(of: directory)
        let lock: OutputLock
        do throws(SinkError) {
            lock = try OutputLock(directory: directory)
        } catch {
            throw ReportError(.cannotWrite, path: join(directory, fileName), reason: error.message)
        }
        defer { lock.release() }
        // Read again under the lock: a run that committed meanwhile is the one described.
        let page = try page(of: directory)
        do throws(SinkError) {
            try replaceFileDurably(directory: directory, name: fileName, bytes: page.rendered())
        } catch {
            throw ReportError(.cannotWrite, path: join(directory, fileName), reason: error.message)
        }
        return join(directory, fileName)
    }

    /// `date` as `2024-05-01 12:00 UTC`.
    public static func committedText(_ date: Date) -> String {
        ReportPage.time(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}

/// Why a report could not be made: a code, the path, and the writer's reason when there is one.
public struct ReportError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The path is not a folder.
        case notAFolder
        /// The folder has no `summary.json`: no run, or a run that did not complete.
        case notACompleteRun
        /// `summary.json` is not a run summary.
        case unreadableSummary
        /// `report-data.json` is not one this version reads.
        case unreadableData
        /// `report.html` could not be written.
        case cannotWrite
    }

    public var code: Code
    public var path: String
    public var reason: String

    public init(_ code: Code, path: String, reason: String = "") {
        self.code = code
        self.path = path
        self.reason = reason
    }

    /// The exit status: 2 for a folder that holds no complete run (a usage error), 1 otherwise.
    public var status: Int32 {
        switch code {
        case .notAFolder, .notACompleteRun: return 2
        case .unreadableSummary, .unreadableData, .cannotWrite: return 1
        }
    }

    public var message: String {
        switch code {
        case .notAFolder:
            return "\(path) is not a folder (or does not exist); give the --out folder of a finished export"
        case .notACompleteRun:
            return "\(path) holds no complete run (no summary.json): give the --out folder of a finished export, "
                + "or finish the run first (--resume continues a run in parts)"
        case .unreadableSummary: return "\(path) is not a receiptflow run summary"
        case .unreadableData:
            return "\(path) is not report data this version reads; export the run again to rewrite it"
        case .cannotWrite: return "cannot write \(path) (\(reason)); check that the folder is writable"
        }
    }

    public var description: String { message }
}
