import CommandArguments
import Foundation
import ReceiptHistory
import ReceiptModel
import ReceiptPipeline
import ReceiptSink

let mergeUsage = """
    usage: receiptflow merge RUN ... --out DIR [--format parquet|csv|ndjson] [--as-of DATE] [--quiet]

    Merges the history of several runs, in the order given, as if they had been one chain of runs on bases (each
    RUN's inputs numbered after those of the RUNs before it): writes purchases.<ext>, subscriptions.<ext>,
    events.<ext>, daily.<ext>, the history state (.receiptflow-state) and summary.json to DIR, equal to the
    history tables of one export over every RUN's inputs in order (docs/incremental.md). Each RUN is an export's
    folder written with history; it is only read. DIR must be new or empty, and no other run may be writing it.

    options:
      --out DIR                      output directory (created)
      --format parquet|csv|ndjson    table format (default parquet)
      --as-of DATE                   the time subscription states are given at, RFC 3339 or a date; default:
                                     the newest contributing receipt of every RUN
      --quiet                        no closing line
    """

/// `receiptflow merge`: the history states of several runs merged in order as one chain. Exit status 0 done, 1
/// could not complete, 2 usage (a RUN that cannot be merged included).
func runMerge(_ argv: [String]) -> Int32 {
    if argv.contains("-h") || argv.contains("--help") {
        print(mergeUsage)
        return 0
    }
    let args: Arguments
    do throws(UsageError) {
        args = try Arguments(argv, flags: ["--quiet"], valued: ["--out", "--format", "--as-of"])
    } catch {
        return usageError("merge", error.message)
    }
    guard let out = args.value("--out"), !out.isEmpty, out != "-" else {
        return usageError("merge", "--out DIR is required: the directory to write the merged history to")
    }
    var format = OutputFormat.parquet
    if let f = args.value("--format") {
        guard let fmt = OutputFormat(rawValue: f) else {
            return usageError("merge", "--format '\(f)' is not one of parquet, csv or ndjson")
        }
        format = fmt
    }
    var asOf: Int64? = nil
    if let a = args.value("--as-of") {
        guard let ms = AsOfDate.parse(a) else {
            return usageError("merge", "--as-of '\(a)' is not an RFC 3339 time such as 2024-05-01T00:00:00Z")
        }
        asOf = ms
    }
    guard !args.positionals.isEmpty else { return usageError("merge", "give the run folders to merge (RUN ...)") }
    var runs: [BaseRun] = []
    for path in args.positionals {
        switch BaseRun.open(path, out: out, option: "") {
        case .success(let run): runs.append(run)
        case .failure(let refusal):
            printError("receiptflow merge: \(refusal.message); nothing was written")
            return 2
        }
    }
    var isFolder: ObjCBool = false
    let existed = FileManager.default.fileExists(atPath: out, isDirectory: &isFolder)
    if existed && !isFolder.boolValue {
        printError("receiptflow merge: \(out) exists and is not a folder; give a new --out; nothing was written")
        return 2
    }
    do {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    } catch {
        printError("receiptflow merge: cannot create \(out): \(error.localizedDescription)")
        return 1
    }
    // Locked as an export locks its folder, then checked empty: a second merge or export into DIR cannot start
    // between the check and the commit.
    let lock: OutputLock
    do throws(SinkError) {
        lock = try OutputLock(directory: out)
    } catch {
        if !existed { try? FileManager.default.removeItem(atPath: out) }
        printError("receiptflow merge: \(error.message); nothing was written")
        return 1
    }
    defer { lock.release() }
    if !((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).isEmpty {
        printError("receiptflow merge: \(out) is not an empty folder; give a new --out; nothing was written")
        return 2
    }
    let inputs = runs.flatMap(\.state.header.inputs)
    let collector = HistoryCollector(directory: out, inputs: inputs, resumable: false)
    collector.mergeChains(runs.map(\.state))
    let unit = CommitUnit(directory: out)
    let started = Date()
    var summary = RunSummary(result: RunResult(), inputs: inputs, format: format.rawValue, verify: true, threads: 1)
    summary.merged = runs.map(\.summary)
    summary.earlierRunsUnverified = runs.contains { $0.state.header.unverified }
    do throws(HistoryError) {
        let r = try collector.finish(asOf: asOf, format: format, metadata: RunMetadata(), unit: unit)
        collector.removeSpill()
        summary.history = HistorySummary(
            asOf: r.asOf, purchases: r.purchases, subscriptions: r.subscriptions, spilledBytes: r.spilledBytes,
            subscriptionsByState: r.subscriptionsByState, events: r.events, daily: r.daily)
    } catch {
        collector.removeSpill()
        unit.discard()
        if !existed { try? FileManager.default.removeItem(atPath: out) }
        printError("receiptflow merge: \(error.message)")
        return 1
    }
    summary.result.elapsedSeconds = Date().timeIntervalSince(started)
    do throws(SinkError) {
        try unit.stage(name: CommitUnit.marker, bytes: summary.encoded())
        try unit.commit()
    } catch {
        unit.discard()
        printError("receiptflow merge: \(error.message)")
        return 1
    }
    if !args.has("--quiet"), let h = summary.history {
        printError(
            "receiptflow merge: \(runs.count) runs: \(h.purchases) purchases, \(h.subscriptions) subscriptions; "
                + "written to \(out)")
        if let note = summary.unverifiedHistoryNote { printError("receiptflow merge: \(note)") }
    }
    return 0
}
