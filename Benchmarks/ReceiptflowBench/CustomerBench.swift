import Foundation

/// The export against the plain C loop on the customer-history corpus: `--no-history` and the default export
/// (history on), each run bracketed by C loop passes, as on the benchmark corpus.
struct CustomerRuns {
    var corpus: CustomerCorpus
    /// Before the first `--no-history` run, after each `--no-history` run, then after each default export run
    /// (`2 noHistory.count + 1` passes).
    var cLoops: [CLoopResult]
    var noHistory: [EndToEndResult]
    var defaultExport: [HistoryRun]
}

/// C loop, `--no-history`, C loop, ..., `--no-history`, C loop, default export, C loop, ..., default export,
/// C loop: `repeats` export runs of each kind, `--no-history` first (the default export's larger heap would
/// otherwise count in their peak RSS). Refuses C loop passes that did not do the export's work.
func runCustomerBench(_ c: CustomerCorpus, threads: Int, repeats: Int, outDir: String) throws -> CustomerRuns {
    let corpus = c.corpus
    var loops = [try runCLoop(corpus, threads: threads)]
    var off: [EndToEndResult] = []
    for _ in 0..<repeats {
        off.append(try runEndToEnd(corpus, threads: threads, outDir: outDir, decompressedBytes: 0))
        loops.append(try runCLoop(corpus, threads: threads))
    }
    var on: [HistoryRun] = []
    for _ in 0..<repeats {
        on.append(try runHistoryEndToEnd(corpus, threads: threads, outDir: outDir, copies: 1, history: true))
        loops.append(try runCLoop(corpus, threads: threads))
    }
    try? FileManager.default.removeItem(atPath: outDir)
    try checkCLoopCoverage(loops, records: off[0].records, valid: off[0].valid)
    for run in on where run.records != off[0].records {
        throw BenchError("the default export read \(run.records) receipts, --no-history \(off[0].records)")
    }
    return CustomerRuns(corpus: c, cLoops: loops, noHistory: off, defaultExport: on)
}
