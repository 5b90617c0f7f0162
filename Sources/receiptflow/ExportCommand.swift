import CommandArguments
import Dispatch
import Foundation
import ReceiptHistory
import ReceiptIO
import ReceiptModel
import ReceiptPipeline
import ReceiptReport
import ReceiptSink
import ReceiptVerify
import Synchronization

let exportUsage = """
    usage: receiptflow export [INPUT ...] --out DIR [options]

    Validates every receipt and JWS of the inputs and writes receipts.<ext>, transactions.<ext>, renewals.<ext>
    (JWS renewal infos; not with ndjson), purchases.<ext>, subscriptions.<ext>, events.<ext> and daily.<ext>
    (the purchase history), report-data.json (the report's figures; not with --part-records) and summary.json
    to DIR, all made visible together (summary.json last) or not at all.
    INPUT is a file or - for standard input (the default): NDJSON, CSV with a header line naming the receipt
    field (the field options then name its columns), or one base64 receipt per line, plain or compressed with
    gzip or zstd, detected from content.

    options:
      --out DIR                      output directory (created); - writes receipts rows to standard output
      --format parquet|csv|ndjson    table format (default parquet)
      --csv-raw                      CSV string cells byte for byte. Without it a cell beginning with =, +, -,
                                     @, a tab or a carriage return (one a spreadsheet would run as a formula)
                                     is written with a leading apostrophe ('=1); numbers are never changed.
                                     Parquet and NDJSON are always exact
      --trust-anchor PATH            root certificate (DER or PEM), repeatable, instead of Apple's roots,
                                     which are built in (Apple Inc. Root, Apple Root CA - G3)
      --no-verify                    decode only; rows say verified = false
      --field NAME                   JSON key or CSV column of the receipt (default: receipt-data,
                                     receipt_data, receipt)
      --id-field NAME                JSON key or CSV column copied into record_id (default: id)
      --environment production|sandbox|any
                                     accept only that environment; others (Xcode, LocalTesting and none
                                     included) get 21007 / 21008 (default any)
      --bundle-id ID                 accept only receipts of this app; repeatable
      --app-version V                accept only receipts and app transactions of this application version;
                                     repeatable
      --device-id-field NAME         JSON key or CSV column of each record's device identifier (a UUID, a
                                     MAC address or 12 or 32 hex digits): device_hash_matches says whether
                                     the receipt's hash (attribute 5) is that device's
      --user-field NAME              JSON key or CSV column of each record's user id in the company's own
                                     systems: receipts.user_id, and user_id, multiple_user_ids on purchases
                                     and subscriptions (null without this option)
      --require-device-match         reject a receipt whose hash is not its record's device's (21003)
      --threads N                    worker threads (default: all cores)
      --max-record-size BYTES        longest input line accepted (default 1048576)
      --stdin-name NAME              the name standard input (-) goes by in `source` and in the history
                                     state (default -), e.g. the path of the file piped in
      --progress / --quiet           progress on standard error (default: when it is a terminal); --quiet
                                     also drops the notes and the closing line
      --report                       also write report.html, a one-page summary of the run for people
                                     (see `receiptflow report`)
      --max-reject-rate R            exit with status 3 (after writing everything) when more than R
                                     (0 to 1) of the records are rejected: for CI and scheduled jobs
      --overwrite                    replace the run already in DIR (the files its summary.json or
                                     manifest.json lists are removed when this run commits; files named like
                                     tables that no run wrote are kept); without it a DIR holding another
                                     run's files is refused. A run never writes over one of its inputs

    purchase history (docs/history.md):
      --as-of DATE                   the time subscription states are given at, RFC 3339 (2024-05-01T00:00:00Z)
                                     or a date (midnight UTC); default: the newest contributing receipt's
                                     creation date. Written into summary.json as as_of
      --no-history                   write only the per-receipt tables, not purchases, subscriptions,
                                     events and daily (the history merges every receipt and spills to a
                                     hidden folder inside DIR while it runs)
      --base PREV                    continue the run in folder PREV (docs/incremental.md): only the new
                                     INPUTs are verified; receipts, transactions and renewals hold their rows,
                                     the four history tables the whole history, equal to one run over
                                     PREV's chain's inputs and these in order. PREV is only read (it keeps its
                                     history state in DIR/.receiptflow-state, as every run with history does)

    resumable runs:
      --part-records N               write each table as a folder of parts (receipts/part-00000.<ext>, ...),
                                     a new part after about N receipts, each committed atomically and listed
                                     in DIR/manifest.json with the input lines it covers. DuckDB, pyarrow
                                     and polars read a folder as one table, rows in input order; Spark
                                     reads it too (order by source, line: Spark keeps no file order)
      --resume                       continue the parts run in DIR after a crash, kill or Ctrl-C: give the
                                     same inputs and options (checked against the manifest; the part size is
                                     read from it). Committed parts are kept, the rest is written again; the
                                     result is what an uninterrupted run writes. Standard input cannot be
                                     resumed. With --part-records, starts the run when DIR has none yet.
    """

/// `receiptflow export`: parses options, wires trust anchors, the sink and the pipeline, and maps the outcome
/// to an exit status (0 done, 1 could not complete, 2 usage, 3 done but more rejected than `--max-reject-rate`,
/// 128 + the signal when interrupted: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
func runExport(_ argv: [String]) -> Int32 {
    if argv.contains("-h") || argv.contains("--help") {
        print(exportUsage)
        return 0
    }
    var setup: ExportSetup
    do throws(UsageError) {
        setup = try ExportSetup(argv)
    } catch {
        return usageError("export", error.message)
    }
    if let path = setup.basePath {
        switch BaseRun.open(path, out: setup.out) {
        case .success(let base): setup.base = base
        case .failure(let refusal):
            printError("receiptflow export: \(refusal.message); nothing was written")
            return 2
        }
    }
    var config = setup.config

    var cache: ChainCache? = nil
    if config.verify {
        do throws(TrustAnchorError) {
            let anchors = try TrustAnchors.load(paths: setup.trustAnchors)
            if let notice = anchors.notice, !setup.quiet { printError("receiptflow export: \(notice)") }
            cache = ChainCache(anchors: anchors)
        } catch {
            printError("receiptflow export: \(error.message)")
            return 1
        }
    }
    if config.inputs.contains("-") && isatty(0) == 1 && !setup.quiet {
        printError(
            "receiptflow export: reading receipts from standard input (a terminal): paste them and end with "
                + "Ctrl-D, or give INPUT files (`receiptflow export --help`).")
    }

    var metadata = RunMetadata()
    metadata.inputs = config.inputs
    metadata.trustAnchorSHA256 = cache?.anchors.anchors.map(\.sha256) ?? []
    config.renderNDJSON = setup.format == .ndjson
    var folder: OutputFolderClaim? = nil
    if setup.out != "-" {
        switch OutputFolderClaim.take(setup) {
        case .success(let claim):
            folder = claim
            setup.out = claim.directory
        case .failure(let refusal): return refusal.status
        }
    }
    if setup.inParts {
        return runInParts(
            setup, config, cache: cache, metadata: metadata, lock: folder?.lock, replacing: folder?.earlierRun ?? [])
    }

    let sink: BatchSink
    let unit = folder.map { CommitUnit(directory: $0.directory) }
    let report = folder == nil ? nil : ReportAggregator()
    do throws(SinkError) {
        if setup.out == "-" {
            sink = try makeStreamSink(format: setup.format, options: setup.sinkOptions)
        } else {
            let tables = try makeSink(
                format: setup.format, directory: setup.out, metadata: metadata, options: setup.sinkOptions, unit: unit)
            sink = report.map { ReportTap(tables, aggregator: $0) } ?? tables
        }
    } catch {
        printError("receiptflow export: \(error.message)")
        folder?.abandon()
        return 1
    }

    let history = setup.history ? setup.makeHistoryCollector(resumable: false) : nil
    let written = HistoryOutcome()
    var finish: (() throws(HistoryError) -> Void)? = nil
    if let history {
        report?.expectSubscriptions()
        finish = { () throws(HistoryError) -> Void in
            written.summary = try finishHistory(history, setup, metadata, unit: unit, observer: report)
        }
    }
    let pipeline = ExportPipeline(
        config: config, sink: sink, cache: cache, history: history, finishHistory: finish)
    let outcome = runInterruptibly(pipeline, showProgress: setup.showProgress)
    history?.removeSpill()
    var status: Int32
    switch outcome {
    case .completed(let result):
        guard let unit, let folder else { return rejectRateStatus(result.counts, setup) }
        status = commitRun(
            result, setup, config, unit: unit, replacing: folder.earlierRun, history: written.summary,
            report: report.map { ($0, metadata) })
    case .failed(let failure, _):
        printError("receiptflow export: \(failure.message)")
        status = 1
    case .cancelled(let result):
        printError(
            "receiptflow export: interrupted after \(result.counts.records) records; partial output was removed. "
                + "Run the command again to export everything.")
        status = interruptedStatus()
    }
    if status != 0 {
        unit?.discard()
        folder?.abandon()
        if case .failed = outcome {
            printError("receiptflow export: the run did not complete; \(setup.out) was left as it was before it.")
        }
    }
    if status == 0, case .completed(let result) = outcome { return rejectRateStatus(result.counts, setup) }
    return status
}

/// 3 when `--max-reject-rate` was given and the run rejected a larger share of its records (said on standard
/// error, even with `--quiet`: it is why the status is not 0), else 0. Everything is written by then.
func rejectRateStatus(_ c: BatchCounts, _ setup: ExportSetup) -> Int32 {
    guard let limit = setup.maxRejectRate, c.records > 0 else { return 0 }
    let rejected = c.records - c.count(of: .valid)
    let share = Double(rejected) / Double(c.records)
    guard share > limit else { return 0 }
    printError(
        "receiptflow export: \(rejected) of \(c.records) records were rejected "
            + "(\(String(format: "%.1f", share * 100))%), more than --max-reject-rate \(setup.maxRejectRateText) "
            + "allows: exit status 3. The output in \(setup.out) is complete.")
    return exportRejectRateStatus
}

/// The exit status of a completed run that rejected more than `--max-reject-rate` allows.
let exportRejectRateStatus: Int32 = 3

/// Stages `summary.json` beside the staged tables and commits the unit, removing the earlier run's files that
/// this run does not replace (`--overwrite`); the exit status.
private func commitRun(
    _ result: RunResult, _ setup: ExportSetup, _ config: PipelineConfig, unit: CommitUnit, replacing earlier: [String],
    history: HistorySummary?, report: (ReportAggregator, RunMetadata)? = nil
) -> Int32 {
    var summary = RunSummary(
        result: result, inputs: config.inputs, format: setup.format.rawValue, verify: config.verify,
        threads: config.threads)
    summary.history = history
    summary.base = setup.base?.summary
    summary.earlierRunsUnverified = setup.base?.state.header.unverified ?? false
    do throws(SinkError) {
        if let (aggregator, metadata) = report {
            try stageReport(aggregator, metadata, setup, summary: summary.encoded(), unit: unit)
        }
        try unit.stage(name: CommitUnit.marker, bytes: summary.encoded())
        try unit.commit(removing: earlier)
    } catch {
        printError("receiptflow export: \(error.message)")
        printError("receiptflow export: the run did not complete; \(setup.out) was left as it was before it.")
        return 1
    }
    if !setup.quiet { printClosing(result.counts, setup, history: history) }
    if !setup.quiet, let note = summary.unverifiedHistoryNote { printError("receiptflow export: \(note)") }
    return 0
}

/// The closing line, then, when most records were rejected for one reason with a likely cause, what to try.
func printClosing(_ c: BatchCounts, _ setup: ExportSetup, history: HistorySummary?) {
    printError("receiptflow export: " + ClosingLine.text(c, history: history, out: setup.out))
    let options = RejectionHint.Options(
        verify: setup.config.verify, trustAnchorsGiven: !setup.trustAnchors.isEmpty, field: setup.fieldGiven)
    if let hint = RejectionHint.of(c, options) { printError("receiptflow export: " + hint.text) }
}

/// The signal that stopped the run (SIGINT, SIGTERM or SIGHUP), 0 while none came.
private let caughtSignal = Atomic<Int32>(0)

/// The exit status of an interrupted run: 128 + the signal, as shells report a process killed by it.
func interruptedStatus() -> Int32 {
    let s = caughtSignal.load(ordering: .sequentiallyConsistent)
    return 128 + (s == 0 ? SIGINT : s)
}

/// Runs `pipeline` on the calling thread with SIGINT, SIGTERM (what `kill`, systemd and Kubernetes send) and
/// SIGHUP cancelling it (no partial file is left under a final name, temporary files are removed) and the
/// progress line when asked for.
/// `already` is what earlier attempts of a resumed run did, so that the line describes the whole run.
func runInterruptibly(_ pipeline: ExportPipeline, showProgress: Bool, already: ProgressLine.Base = .init())
    -> RunOutcome
{
    // Each source leaves `released` from its cancel handler, which runs once its event handler can no longer
    // run; waiting for it releases the handlers (and the pipeline they hold) here, before returning, and not
    // on a worker thread while the process exits.
    let released = DispatchGroup()
    let sources = [SIGINT, SIGTERM, SIGHUP].map { sig in
        signal(sig, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler {
            _ = caughtSignal.compareExchange(expected: 0, desired: sig, ordering: .sequentiallyConsistent)
            pipeline.cancel()
        }
        released.enter()
        source.setCancelHandler { released.leave() }
        source.resume()
        return source
    }
    let progress = showProgress ? ProgressLine(already: already) { pipeline.progress } : nil
    let outcome = pipeline.run()
    progress?.stop()
    for source in sources { source.cancel() }
    released.wait()
    return outcome
}

/// The parsed command line of `export`.
struct ExportSetup {
    var config = PipelineConfig()
    var out = ""
    var format = OutputFormat.parquet
    var trustAnchors: [String] = []
    var showProgress = false
    /// `--quiet`: no progress, notes or closing line.
    var quiet = false
    /// `--part-records`: receipts rows per part.
    var partRecords: Int? = nil
    /// `--resume`: continue the parts run in `out`.
    var resume = false
    /// Write `purchases` and `subscriptions` (not with `--no-history` or `--out -`).
    var history = true
    /// `--as-of`, epoch milliseconds.
    var asOf: Int64? = nil
    /// `--base PREV`: the earlier run this one continues, as given; `base` once checked.
    var basePath: String? = nil
    var base: BaseRun? = nil
    /// Output as folders of parts with a manifest (`--part-records` or `--resume`).
    var inParts: Bool { partRecords != nil || resume }
    /// `--overwrite`: replace the run already in `out`.
    var overwrite = false
    /// `--report`: write `report.html` with the run.
    var report = false
    /// The writers' options: `--csv-raw`.
    var sinkOptions = SinkOptions()
    /// `--field`, when given (for the hint that names it).
    var fieldGiven: String? = nil
    /// `--max-reject-rate`: the largest share of rejected records a run may have and exit 0; as given.
    var maxRejectRate: Double? = nil
    var maxRejectRateText = ""

    /// The command line as given, for the run's identity (`outputOptions`).
    let args: Arguments

    init(_ argv: [String]) throws(UsageError) {
        // Every option is declared once, with whether it changes output (the resumed run's identity).
        let args = try Arguments(
            argv, flags: ExportOptions.flags, valued: ExportOptions.valued, repeatable: ExportOptions.repeatable)
        self.args = args
        guard let out = args.value("--out"), !out.isEmpty else {
            throw UsageError(
                .missingOption, option: "--out DIR", expected: "the directory to write the tables and summary.json to")
        }
        self.out = out
        if let f = args.value("--format") {
            guard let fmt = OutputFormat(rawValue: f) else {
                throw UsageError(.invalidValue, option: "--format", value: f, expected: "parquet, csv or ndjson")
            }
            format = fmt
        }
        sinkOptions.csvRaw = args.has("--csv-raw")
        if sinkOptions.csvRaw && format != .csv {
            throw UsageError(
                .invalidCombination, option: "--csv-raw",
                detail: "--csv-raw changes CSV cells; it needs --format csv (Parquet and NDJSON are always exact)")
        }
        if out == "-" && format == .parquet {
            throw UsageError(
                .invalidCombination, option: "--out",
                detail: "--out - writes to standard output, which needs --format csv or ndjson")
        }
        config.inputs = args.positionals.isEmpty ? ["-"] : args.positionals
        if config.inputs.filter({ $0 == "-" }).count > 1 {
            throw UsageError(.invalidCombination, option: "-", detail: "standard input (-) can be given only once")
        }
        trustAnchors = args.values("--trust-anchor").map { pathByDescriptor($0, directory: false) }
        config.verify = !args.has("--no-verify")
        if let f = args.value("--field") {
            guard !f.isEmpty else { throw UsageError(.emptyValue, option: "--field", expected: "a non-empty key name") }
            config.field = f
            fieldGiven = f
        }
        if let r = args.value("--max-reject-rate") {
            guard let v = Double(r), v >= 0, v <= 1 else {
                throw UsageError(.invalidValue, option: "--max-reject-rate", value: r, expected: "a number from 0 to 1")
            }
            maxRejectRate = v
            maxRejectRateText = r
        }
        if let f = args.value("--id-field") { config.idField = f.isEmpty ? nil : f }
        if let n = args.value("--stdin-name") {
            guard !n.isEmpty, config.inputs.contains("-") else {
                throw UsageError(
                    .invalidCombination, option: "--stdin-name",
                    detail: "--stdin-name names standard input (-): give a non-empty name and read from -")
            }
            config.stdinName = n
        }
        if let e = args.value("--environment") {
            guard let env = EnvironmentRequirement(rawValue: e) else {
                throw UsageError(
                    .invalidValue, option: "--environment", value: e, expected: "production, sandbox or any")
            }
            config.environment = env
        }
        config.bundleIDs = args.values("--bundle-id")
        config.appVersions = args.values("--app-version")
        if let f = args.value("--device-id-field") {
            guard !f.isEmpty else {
                throw UsageError(.emptyValue, option: "--device-id-field", expected: "a non-empty key name")
            }
            config.deviceIDField = f
        }
        if let f = args.value("--user-field") {
            guard !f.isEmpty else {
                throw UsageError(.emptyValue, option: "--user-field", expected: "a non-empty key name")
            }
            config.userField = f
        }
        config.requireDeviceMatch = args.has("--require-device-match")
        if config.requireDeviceMatch && config.deviceIDField == nil {
            throw UsageError(
                .invalidCombination, option: "--require-device-match",
                detail: "--require-device-match needs --device-id-field NAME")
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        if let n = try args.int("--threads") {
            guard (1...1024).contains(n) else {
                throw UsageError(.invalidValue, option: "--threads", value: String(n), expected: "1 to 1024")
            }
            config.threads = n
        } else {
            config.threads = max(cores, 1)
        }
        if let n = try args.int("--max-record-size") {
            guard (16...(256 << 20)).contains(n) else {
                throw UsageError(
                    .invalidValue, option: "--max-record-size", value: String(n), expected: "16 to 268435456 bytes")
            }
            config.reader.maxRecordSize = n
        }
        if args.has("--progress") && args.has("--quiet") {
            throw UsageError(
                .invalidCombination, option: "--progress",
                detail: "--progress and --quiet contradict each other; give one")
        }
        quiet = args.has("--quiet")
        showProgress = args.has("--progress") || (!quiet && isatty(2) == 1)
        if let n = try args.int("--part-records") {
            guard (1...100_000_000).contains(n) else {
                throw UsageError(
                    .invalidValue, option: "--part-records", value: String(n),
                    expected: "1 to 100000000 receipts per part")
            }
            partRecords = n
        }
        resume = args.has("--resume")
        history = !args.has("--no-history") && out != "-"
        if let a = args.value("--as-of") {
            guard let ms = AsOfDate.parse(a) else {
                throw UsageError(
                    .invalidValue, option: "--as-of", value: a,
                    expected: "an RFC 3339 time such as 2024-05-01T00:00:00Z (or a date, 2024-05-01)")
            }
            guard history else {
                throw UsageError(
                    .invalidCombination, option: "--as-of",
                    detail: "--as-of sets the time of the subscriptions table, which this run does not write")
            }
            asOf = ms
        }
        if let b = args.value("--base") {
            guard !b.isEmpty else {
                throw UsageError(.emptyValue, option: "--base", expected: "the output folder of an earlier run")
            }
            guard history else {
                throw UsageError(
                    .invalidCombination, option: "--base",
                    detail: out == "-"
                        ? "--base continues the purchase history, which --out - does not write; give a directory"
                        : "--base continues the purchase history, which --no-history does not write; give one of them")
            }
            basePath = b
        }
        overwrite = args.has("--overwrite")
        if overwrite && out == "-" {
            throw UsageError(
                .invalidCombination, option: "--overwrite",
                detail: "--overwrite replaces the run in an output directory; --out - has none")
        }
        if overwrite && resume {
            throw UsageError(
                .invalidCombination, option: "--overwrite",
                detail: "--overwrite starts over and --resume continues; give one")
        }
        if inParts && out == "-" {
            throw UsageError(
                .invalidCombination, option: "--part-records",
                detail: "--part-records and --resume write folders of parts; give a directory to --out")
        }
        report = args.has("--report")
        if report && (out == "-" || inParts) {
            throw UsageError(
                .invalidCombination, option: "--report",
                detail: out == "-"
                    ? "--report writes report.html into an output directory; --out - has none"
                    : "--report is made with a run that commits as one; run `receiptflow report DIR` once the "
                        + "run in parts is complete")
        }
        if resume && config.inputs.contains("-") {
            throw UsageError(
                .invalidCombination, option: "--resume",
                detail: "standard input cannot be resumed: what was read from it is gone. Save it to a file and "
                    + "export the file (with --part-records N to make the run resumable)")
        }
    }
}

/// Writes `summary.json` for a completed run (with its parts, for a parts run); the exit status.
func writeRunSummary(
    _ result: RunResult, _ setup: ExportSetup, _ config: PipelineConfig,
    parts: (count: Int, partRecords: Int, attempts: Int)? = nil, history: HistorySummary? = nil
) -> Int32 {
    var summary = RunSummary(
        result: result, inputs: config.inputs, format: setup.format.rawValue, verify: config.verify,
        threads: config.threads)
    summary.parts = parts
    summary.history = history
    summary.base = setup.base?.summary
    summary.earlierRunsUnverified = setup.base?.state.header.unverified ?? false
    do throws(SummaryError) {
        try summary.write(to: setup.out)
    } catch {
        printError("receiptflow export: \(error.message)")
        return 1
    }
    if !setup.quiet { printClosing(result.counts, setup, history: history) }
    if !setup.quiet, let note = summary.unverifiedHistoryNote { printError("receiptflow export: \(note)") }
    return rejectRateStatus(result.counts, setup)
}

/// What the history stage of a run wrote, set on the writer thread and read after the run.
final class HistoryOutcome: @unchecked Sendable {
    var summary: HistorySummary? = nil
}

/// Writes the history tables of `collector` into the output directory (the end of the history stage): staged in
/// `unit` when the run commits as one, renamed into place otherwise. `observer` sees their rows (the report).
func finishHistory(
    _ collector: HistoryCollector, _ setup: ExportSetup, _ metadata: RunMetadata, unit: CommitUnit? = nil,
    observer: TableObserver? = nil
) throws(HistoryError) -> HistorySummary {
    var options = setup.sinkOptions
    options.observer = observer
    let r = try collector.finish(
        asOf: setup.asOf, format: setup.format, metadata: metadata, options: options, unit: unit)
    return HistorySummary(
        asOf: r.asOf, purchases: r.purchases, subscriptions: r.subscriptions, spilledBytes: r.spilledBytes,
        subscriptionsByState: r.subscriptionsByState, events: r.events, daily: r.daily)
}
