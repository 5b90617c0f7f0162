import CommandArguments
import Foundation
import ReceiptModel
import ReceiptReport
import ReceiptSink

let reportUsage = """
    usage: receiptflow report DIR

    Writes DIR/report.html: a one-page summary of the finished run in DIR for the people who own the data (the
    run, the share of valid records and why the rest were rejected, the apps, environments and months, the
    subscriptions by state, the throughput). One self-contained file: no network, no script, printable.
    DIR must hold a complete run (its summary.json); the breakdowns by app, month and subscription come from
    DIR/report-data.json, which every export into a folder writes (a run written in parts has none: its report
    gives what summary.json holds). `export --report` writes the page with the run.

    exit status: 0 written, 1 the page could not be written, 2 usage (DIR holds no complete run)
    """

/// `receiptflow report DIR`: writes the run's `report.html`.
func runReport(_ argv: [String]) -> Int32 {
    if argv.contains("-h") || argv.contains("--help") {
        print(reportUsage)
        return 0
    }
    let args: Arguments
    do throws(UsageError) {
        args = try Arguments(argv, flags: [], valued: [])
    } catch {
        return usageError("report", error.message)
    }
    guard args.positionals.count == 1, let directory = args.positionals.first else {
        return usageError(
            "report", args.positionals.isEmpty ? "give the folder of a finished run (DIR)" : "give one folder (DIR)")
    }
    do throws(ReportError) {
        let path = try ReportFolder.write(in: directory)
        print(path)
        return 0
    } catch {
        printError("receiptflow report: \(error.message)")
        return error.status
    }
}

/// Stages `report-data.json` (the aggregates of the run) in `unit`, and with `--report` the page made from them
/// and `summary` (the bytes of the run's summary.json), so that both are committed with the run's other files.
func stageReport(
    _ aggregator: ReportAggregator, _ metadata: RunMetadata, _ setup: ExportSetup, summary: [UInt8],
    unit: CommitUnit
) throws(SinkError) {
    var data = aggregator.data
    data.trustAnchorSHA256 = metadata.trustAnchorSHA256
    data.asOfGiven = setup.asOf != nil
    try unit.stage(name: ReportData.fileName, bytes: data.encoded())
    guard setup.report, let facts = RunFacts(summary: summary) else { return }
    let page = ReportPage(facts: facts, data: data, committedAt: ReportFolder.committedText(Date()))
    try unit.stage(name: ReportFolder.fileName, bytes: page.rendered())
}
