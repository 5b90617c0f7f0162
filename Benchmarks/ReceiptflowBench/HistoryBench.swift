import Foundation
import ReceiptHistory
import ReceiptPipeline
import ReceiptSink
import ReceiptVerify

let historyUsage = """
    usage: receiptflow-bench history [--short] [--count N] [--seed S] [--corpus FILE --corpus-nx FILE]
                                     [--customers N] [--customer-corpus FILE] [--out DIR] [--threads N]
                                     [--repeat R] [--copies N] [--json FILE] [--check FILE]

    End to end (zstd NDJSON in, Parquet out, verification on) with the purchase history on and off, in
    alternating pairs, over the corpus; then once with history on over a corpus about N times larger of
    distinct data (so that distinct purchases grow N times: reading one file N times would only repeat
    them), at the default budget; then once more over each corpus with a 4 MiB history budget, so that
    the history spills as it goes (one partitioning level, as a large run at the default budget).
    Reports the CPU-time ratio on/off, peak RSS at both sizes and spill bytes per receipt. Below the budget
    memory grows with the distinct purchases; beyond it, it stays flat: rss_nx_over_1x_all_spilled compares
    the two sizes both past the budget. Last, the same on a customer-history corpus, where receipts repeat
    their account's purchases as in real archives (customers_*): --no-history, the default export and the
    default export with a 4 MiB budget, in rounds, each ratio the median round's. The corpus is the receipts
    bench's, `receiptflow generate --customers N --years 3 --seed S` made in --out if absent with the same test
    CA (--customers 8000, about 105,000 receipts; 0 skips it), or --customer-corpus FILE made with that CA.
    --check reads the "history" section of a thresholds file.

    --short is the CI form (about 45 s of CPU time with making the short corpora, and 35 s more to make the
    customer-history corpus when absent): --count 10000 --copies 4 --repeat 3 unless given, checked against the
    "history_short" section. A section's "target_min" and "target_max" are printed beside the measured values,
    as goals, without failing the check.

    Without --corpus, the plain generator makes both corpora: --count receipts, and --count x --copies
    (default 10) receipts of another seed. The corpus that shows the history's real work is a customer-history
    one, where receipts repeat their account's purchases: make two with `receiptflow generate --customers N
    --ca-dir DIR/test-ca` (DIR as --out), one with N customers and one with 10 N customers of another seed,
    and pass them with --corpus and --corpus-nx.
    """

/// One end-to-end run with or without history.
struct HistoryRun {
    var records: Int
    var wallSeconds: Double
    var cpuSeconds: Double
    var peakRSSMB: Double
    var spilledBytes: Int64
    /// The purchases' part of `spilledBytes`, and the purchase records written for it.
    var spilledPurchaseBytes: Int64
    var spilledPurchaseRecords: Int64
    var purchases: Int64
    /// CPU time of the process while the history's final merge and table writing run (the workers are done by
    /// then; the tables' encoding and the subscriptions pass run on queues of their own, counted here too).
    var finishCPUSeconds: Double
}

func runHistoryEndToEnd(
    _ corpus: Corpus, threads: Int, outDir: String, copies: Int, history: Bool, budget: Int? = nil
) throws -> HistoryRun {
    let anchors = try TrustAnchors(certificates: [(source: "bench-test-root", bytes: corpus.rootDER)])
    let cache = ChainCache(anchors: anchors)
    var config = PipelineConfig()
    config.inputs = Array(repeating: corpus.path, count: copies)
    config.threads = threads
    try? FileManager.default.removeItem(atPath: outDir)
    let sink = try makeSink(format: .parquet, directory: outDir, metadata: RunMetadata())
    let collector =
        history
        ? HistoryCollector(directory: outDir, inputs: config.inputs, resumable: false, memoryBudget: budget) : nil
    final class Box: @unchecked Sendable {
        var result: HistoryResult? = nil
        var finishCPU = 0.0
    }
    let box = Box()
    var finish: (() throws(HistoryError) -> Void)? = nil
    if let collector {
        finish = { () throws(HistoryError) -> Void in
            let c = Measure.processCPU()
            box.result = try collector.finish(asOf: nil, format: .parquet, metadata: RunMetadata())
            box.finishCPU = Measure.processCPU() - c
        }
    }
    let pipeline = ExportPipeline(config: config, sink: sink, cache: cache, history: collector, finishHistory: finish)
    Measure.resetPeakRSS()
    let c0 = Measure.processCPU()
    let t0 = Measure.wall()
    let outcome = pipeline.run()
    let wall = Measure.wall() - t0
    let cpu = Measure.processCPU() - c0
    let peak = Measure.peakRSSMB()
    collector?.removeSpill()
    guard case .completed(let r) = outcome else { throw BenchError("the history run did not complete: \(outcome)") }
    return HistoryRun(
        records: r.counts.records, wallSeconds: wall, cpuSeconds: cpu, peakRSSMB: peak,
        spilledBytes: box.result?.spilledBytes ?? 0, spilledPurchaseBytes: box.result?.spilledPurchaseBytes ?? 0,
        spilledPurchaseRecords: box.result?.spilledPurchaseRecords ?? 0, purchases: box.result?.purchases ?? 0,
        finishCPUSeconds: box.finishCPU)
}

func runHistoryBenchmark(_ args: [String]) -> Int32 {
    do {
        let short = args.contains("--short")
        var count = short ? 10_000 : 50_000
        var seed: UInt64 = 2
        var corpusPath: String? = nil
        var corpusNxPath: String? = nil
        var out = "bench-out"
        var threads = ProcessInfo.processInfo.activeProcessorCount
        var repeats = short ? 3 : 2
        var copies = short ? 4 : 10
        var json: String? = nil
        var check: String? = nil
        var customers = 8000
        var customerCorpus: String? = nil
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < args.count else { throw BenchError("\(args[i - 1]) needs a value\n\n\(historyUsage)") }
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--short": break
            case "--count": count = try RunOptions.number(try value(), "--count")
            case "--seed": seed = UInt64(try RunOptions.number(try value(), "--seed"))
            case "--corpus": corpusPath = try value()
            case "--corpus-nx": corpusNxPath = try value()
            case "--customers": customers = try RunOptions.number(try value(), "--customers")
            case "--customer-corpus": customerCorpus = try value()
            case "--out": out = try value()
            case "--threads": threads = try RunOptions.number(try value(), "--threads")
            case "--repeat": repeats = try RunOptions.number(try value(), "--repeat")
            case "--copies": copies = try RunOptions.number(try value(), "--copies")
            case "--json": json = try value()
            case "--check": check = try value()
            case "-h", "--help":
                print(historyUsage)
                return 0
            default: throw BenchError("unknown option \(args[i])\n\n\(historyUsage)")
            }
            i += 1
        }
        guard (corpusPath == nil) == (corpusNxPath == nil) else {
            throw BenchError("--corpus and --corpus-nx go together\n\n\(historyUsage)")
        }
        let corpus = try Corpus.prepare(directory: out, count: count, seed: seed, badFraction: 0.05, path: corpusPath)
        let corpusNx = try Corpus.prepare(
            directory: out, count: count * copies, seed: seed + 1, badFraction: 0.05, path: corpusNxPath)
        let dir = out + "/history-parquet"
        var ratios: [Double] = []
        var on1: [HistoryRun] = []
        var off1: [HistoryRun] = []
        for _ in 0..<repeats {
            let off = try runHistoryEndToEnd(corpus, threads: threads, outDir: dir, copies: 1, history: false)
            let on = try runHistoryEndToEnd(corpus, threads: threads, outDir: dir, copies: 1, history: true)
            off1.append(off)
            on1.append(on)
            ratios.append(on.cpuSeconds / off.cpuSeconds)
        }
        // Peak RSS is the process's: the runs go from the smallest footprint to the largest, so that memory the
        // allocator kept from one run does not count in the next.
        let spilled = try runHistoryEndToEnd(
            corpus, threads: threads, outDir: dir, copies: 1, history: true, budget: 4 << 20)
        let offN = try runHistoryEndToEnd(corpusNx, threads: threads, outDir: dir, copies: 1, history: false)
        let spilledN = try runHistoryEndToEnd(
            corpusNx, threads: threads, outDir: dir, copies: 1, history: true, budget: 4 << 20)
        let onN = try runHistoryEndToEnd(corpusNx, threads: threads, outDir: dir, copies: 1, history: true)
        try? FileManager.default.removeItem(atPath: dir)

        let ratio = ratios.sorted()[ratios.count / 2]
        let offBest = off1.map(\.cpuSeconds).min() ?? 0
        let rss1 = on1.map(\.peakRSSMB).max() ?? 0
        let records1 = Double(on1[0].records)
        var report: [String: Any] = [
            "threads": threads, "records_1x": on1[0].records, "records_nx": onN.records,
            "purchases_1x": on1[0].purchases, "purchases_nx": onN.purchases,
            "records_nx_over_1x": Double(onN.records) / records1,
            "purchases_nx_over_1x": Double(onN.purchases) / Double(max(on1[0].purchases, 1)),
            "on_over_off_cpu": ratio,
            // Throughput with the history on as a fraction of --no-history's, by CPU time (the same records):
            // the median pair's, at the default budget over the 1x corpus; all spilled (4 MiB budget) against the
            // fastest --no-history run; and over the Nx corpus.
            "on_throughput_over_off_cpu": 1 / ratio,
            "all_spilled_throughput_over_off_cpu": offBest / spilled.cpuSeconds,
            "on_throughput_over_off_cpu_nx": offN.cpuSeconds / onN.cpuSeconds,
            "on_over_off_cpu_runs": ratios,
            "cpu_seconds_off_1x": off1.map(\.cpuSeconds).min() ?? 0,
            "cpu_seconds_on_1x": on1.map(\.cpuSeconds).min() ?? 0,
            "finish_cpu_seconds_1x": on1.map(\.finishCPUSeconds).min() ?? 0,
            "on_over_off_wall": (on1.map(\.wallSeconds).reduce(0, +)) / (off1.map(\.wallSeconds).reduce(0, +)),
            "off_receipts_per_second": records1 / (off1.map(\.wallSeconds).min() ?? 1),
            "on_receipts_per_second": records1 / (on1.map(\.wallSeconds).min() ?? 1),
            "peak_rss_mb_off_1x": off1.map(\.peakRSSMB).max() ?? 0,
            "peak_rss_mb_1x": rss1,
            "peak_rss_mb_nx": onN.peakRSSMB,
            "rss_nx_over_1x": onN.peakRSSMB / max(rss1, 1),
            "spill_bytes_per_receipt_1x": Double(on1[0].spilledBytes) / records1,
            "spill_bytes_per_receipt_nx": Double(onN.spilledBytes) / Double(onN.records),
            "spill_bytes_per_receipt_all_spilled": Double(spilled.spilledBytes) / Double(spilled.records),
            "spill_bytes_per_receipt_nx_all_spilled": Double(spilledN.spilledBytes) / Double(spilledN.records),
            // Bytes per purchase record in the spill files (each write of a record counts: to a segment, then to
            // a sorted run), everything spilled.
            "spill_bytes_per_purchase_record_all_spilled": Double(spilled.spilledPurchaseBytes)
                / Double(max(spilled.spilledPurchaseRecords, 1)),
            "spill_bytes_per_purchase_record_nx_all_spilled": Double(spilledN.spilledPurchaseBytes)
                / Double(max(spilledN.spilledPurchaseRecords, 1)),
            "peak_rss_mb_1x_all_spilled": spilled.peakRSSMB,
            "peak_rss_mb_nx_all_spilled": spilledN.peakRSSMB,
            "peak_rss_mb_off_nx": offN.peakRSSMB,
            "on_over_off_cpu_nx": onN.cpuSeconds / offN.cpuSeconds,
            "rss_nx_over_1x_all_spilled": spilledN.peakRSSMB / max(spilled.peakRSSMB, 1),
        ]
        if customers > 0 || customerCorpus != nil {
            let c = try CustomerCorpus.prepare(
                directory: out, customers: customers, years: 3, seed: seed, path: customerCorpus)
            let runs = try runHistoryCustomers(
                c, threads: threads, outDir: out + "/history-customers-parquet", repeats: repeats)
            report.merge(runs) { old, _ in old }
        }
        for k in report.keys.sorted() { print("history: \(k) = \(report[k]!)") }
        if let json {
            let data = try JSONSerialization.data(
                withJSONObject: ["history": report], options: [.prettyPrinted, .sortedKeys])
            try data.write(to: URL(fileURLWithPath: json))
        }
        if let check {
            let data = try Data(contentsOf: URL(fileURLWithPath: check))
            let section = short ? "history_short" : "history"
            guard let t = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                let h = t[section] as? [String: Any]
            else { throw BenchError("\(check) has no \"\(section)\" section") }
            printTargets(h) { (report[$0] as? NSNumber)?.doubleValue }
            let failures = checkSection(
                h, report.compactMapValues { ($0 as? NSNumber)?.doubleValue ?? ($0 as? Double) })
            if failures > 0 {
                print("receiptflow-bench history: \(failures) regression(s) against \(check)")
                return 1
            }
            print("receiptflow-bench history: no regression against \(check)")
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("receiptflow-bench history: \(error)\n".utf8))
        return 1
    }
}

/// A thresholds section's goals (`target_min`, `target_max`) beside the measured values (`value(key)`): printed,
/// never failing the check.
func printTargets(_ section: [String: Any], _ value: (String) -> Double?) {
    for (bound, isMin) in [("target_min", true), ("target_max", false)] {
        for (key, goal) in (section[bound] as? [String: Any] ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let goal = (goal as? NSNumber)?.doubleValue, let v = value(key) else { continue }
            let met = isMin ? v >= goal : v <= goal
            print(
                (met ? "goal  " : "todo  ")
                    + String(format: "%@ = %.4f (target %@ %.4f, not a gate)", key, v, isMin ? ">=" : "<=", goal))
        }
    }
}
