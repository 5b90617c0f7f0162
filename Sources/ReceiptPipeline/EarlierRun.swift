import Foundation
import ReceiptModel
import ReceiptSink

/// The files in an output folder that a run of receiptflow wrote, as its `summary.json` and `manifest.json`
/// (with `manifest.log`) list them. `--overwrite` removes these and nothing else: a file merely named like a
/// table, with no summary or manifest that lists it, is not a run's and is kept.
public struct EarlierRun: Sendable, Equatable {
    /// Relative paths of the files a run wrote (`receipts.csv`, `receipts/part-00000.csv`, `summary.json`, ...).
    public var files: Set<String> = []

    public init(files: Set<String> = []) { self.files = files }

    /// Reads what `directory`'s summary and manifest list; a summary that is not receiptflow's lists nothing, a
    /// manifest that cannot be read lists only itself and its log (they can only be a parts run's).
    public static func read(_ directory: String) -> EarlierRun {
        var run = EarlierRun()
        if let summary = summaryFiles(directory) {
            run.files.formUnion(summary)
            run.files.insert("summary.json")
            // `receiptflow report` writes its page and aggregates of the run beside it.
            run.files.formUnion(Self.reportFiles)
        }
        let manifestPath = joinPath(directory, PartManifest.fileName)
        if FileManager.default.fileExists(atPath: manifestPath) {
            run.files.insert(PartManifest.fileName)
            if FileManager.default.fileExists(atPath: joinPath(directory, ManifestStore.logName)) {
                run.files.insert(ManifestStore.logName)
            }
            if let m = try? PartManifest.load(from: directory),
                let format = OutputFormat(rawValue: m.identity.format)
            {
                run.files.formUnion(m.parts.flatMap(\.files))
                if m.history != nil { run.files.formUnion(historyFiles(format)) }
            }
        }
        return run
    }

    /// The table files a summary says its run wrote; nil when there is no summary of receiptflow's.
    private static func summaryFiles(_ directory: String) -> Set<String>? {
        guard let data = FileManager.default.contents(atPath: joinPath(directory, "summary.json")),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            object["tool_version"] is String, let name = object["format"] as? String,
            let format = OutputFormat(rawValue: name)
        else { return nil }
        var files = Set<String>()
        // A parts run's part files are listed by its manifest; a plain run's tables are named by the format.
        if object["parts"] == nil { files.formUnion(OutputFolder.tableFiles(format)) }
        if object["history"] != nil { files.formUnion(historyFiles(format)) }
        return files
    }

    /// What `receiptflow report` (or `export --report`) writes beside a run.
    public static let reportFiles = ["report-data.json", "report.html"]

    /// The history tables (`purchases`, `subscriptions`, `events`, `daily`) and the history state kept for a later
    /// run.
    public static func historyFiles(_ format: OutputFormat) -> [String] {
        ["purchases", "subscriptions", "events", "daily"].map { "\($0).\(format.fileExtension)" }
            + [OutputFolder.historyState]
    }
}
