import Dispatch
import Foundation
import ReceiptPipeline
import ReceiptSink
import ReceiptSynth
import ReceiptVerify

let repeatsUsage = """
    usage: receiptflow-bench repeats [--count N] [--seed S] [--repeat R] [--threads T] [--out DIR]
                                     [--json FILE] [--check FILE]

    Repeated receipts against distinct ones, end to end (NDJSON in, Parquet out, verification on), in
    alternating pairs after one warm-up pair: a corpus of N records where every receipt appears four times,
    shuffled (N/4 distinct receipts), and a corpus of N distinct receipts (default N = 20000, R = 5 pairs; both
    made once in DIR, default bench-out, from the test CA, 5% bad records).
    ratios.repeated_over_distinct_records_per_cpu_second is the median over the pairs of records per CPU second
    of the repeated corpus over the distinct one, with the default export (history on);
    ratios.no_history_repeated_over_distinct_records_per_cpu_second the same with --no-history, each pair run
    right after the default export's. --check reads the "repeats" section of a thresholds file.
    """

/// Writes the two corpora (when absent): `count` distinct records, and the first `count / 4` of them four times
/// each in a shuffled order. Returns their paths.
private func prepareRepeatCorpora(directory: String, count: Int, seed: UInt64) throws -> (
    distinct: Corpus, repeated: Corpus
) {
    let fm = FileManager.default
    try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let pki = try TestPKI.load(directory: URL(fileURLWithPath: directory).appendingPathComponent("test-ca"))
    let distinct = "\(directory)/repeats-distinct-\(count)-s\(seed).ndjson"
    let repeated = "\(directory)/repeats-x4-\(count)-s\(seed).ndjson"
    if !fm.fileExists(atPath: distinct) || !fm.fileExists(atPath: repeated) {
        FileHandle.standardError.write(Data("generating \(count) receipts for the repeats benchmark ...\n".utf8))
        let factory = RecordFactory(pki: pki, seed: seed, digest: .mixed, badFraction: 0.05)
        let lines = UnsafeSendableLines(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { i in lines.set(i, factory.record(i).line) }
        var order = (0..<count).map { $0 % max(count / 4, 1) }
        var rng = SplitMix(seed: seed, index: 0)
        // Fisher-Yates with the generator's own random numbers: the same seed gives the same file.
        for i in stride(from: order.count - 1, to: 0, by: -1) {
            order.swapAt(i, Int(rng.next() % UInt64(i + 1)))
        }
        func write(_ path: String, _ indices: [Int]) throws {
            var bytes: [UInt8] = []
            for i in indices {
                bytes += lines.get(i)
                bytes.append(0x0A)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        try write(distinct, Array(0..<count))
        try write(repeated, order)
    }
    func corpus(_ path: String) -> Corpus {
        Corpus(
            path: path, rootPEM: "", rootDER: pki.root.der, pki: pki, count: count, seed: seed, badFraction: 0.05,
            compressedBytes: 0, generatedSeconds: nil)
    }
    return (corpus(distinct), corpus(repeated))
}

/// Lines written by concurrent generator threads, one slot each.
private final class UnsafeSendableLines: @unchecked Sendable {
    private var lines: [[UInt8]]
    private let lock = NSLock()
    init(count: Int) { lines = Array(repeating: [], count: count) }
    func set(_ i: Int, _ line: [UInt8]) { lock.withLock { lines[i] = line } }
    func get(_ i: Int) -> [UInt8] { lock.withLock { lines[i] } }
}

/// `receiptflow-bench repeats`: see `repeatsUsage`.
func runRepeatsBenchmark(_ args: [String]) -> Int32 {
    do {
        var count = 20_000
        var seed: UInt64 = 4
        var repeats = 5
        var threads = ProcessInfo.processInfo.activeProcessorCount
        var out = "bench-out"
        var json: String? = nil
        var check: String? = nil
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < args.count else { throw BenchError("\(args[i - 1]) needs a value\n\n\(repeatsUsage)") }
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--count": count = try RunOptions.number(try value(), "--count")
            case "--seed": seed = UInt64(try RunOptions.number(try value(), "--seed"))
            case "--repeat": repeats = try RunOptions.number(try value(), "--repeat")
            case "--threads": threads = try RunOptions.number(try value(), "--threads")
            case "--out": out = try value()
            case "--json": json = try value()
            case "--check": check = try value()
            case "-h", "--help":
                print(repeatsUsage)
                return 0
            default: throw BenchError("unknown option \(args[i])\n\n\(repeatsUsage)")
            }
            i += 1
        }
        let corpora = try prepareRepeatCorpora(directory: out, count: count, seed: seed)
        let dir = out + "/repeats-parquet"
        /// One pair: the distinct corpus, then the repeated one; records per CPU second of each.
        func pair(history: Bool) throws -> (distinct: Double, repeated: Double) {
            // Each run verifies with a fresh chain cache: no run reuses what another verified.
            let d = try runHistoryEndToEnd(corpora.distinct, threads: threads, outDir: dir, copies: 1, history: history)
            let r = try runHistoryEndToEnd(corpora.repeated, threads: threads, outDir: dir, copies: 1, history: history)
            guard d.records == r.records else {
                throw BenchError("the corpora hold \(d.records) and \(r.records) records; they must be the same")
            }
            return (Double(d.records) / d.cpuSeconds, Double(r.records) / r.cpuSeconds)
        }
        var ratios: [Double] = []
        var offRatios: [Double] = []
        var distinctRates: [Double] = []
        var repeatedRates: [Double] = []
        // A warm-up pair, not counted: the first runs of a process pay for its allocator's and caches' growth.
        _ = try pair(history: true)
        for _ in 0..<max(repeats, 1) {
            let on = try pair(history: true)
            let off = try pair(history: false)
            distinctRates.append(on.distinct)
            repeatedRates.append(on.repeated)
            ratios.append(on.repeated / on.distinct)
            offRatios.append(off.repeated / off.distinct)
            print(
                String(
                    format: "repeats: distinct %.0f records/CPU s, repeated x4 %.0f records/CPU s, ratio %.3f "
                        + "(--no-history: %.0f, %.0f, ratio %.3f)",
                    on.distinct, on.repeated, on.repeated / on.distinct, off.distinct, off.repeated,
                    off.repeated / off.distinct))
        }
        try? FileManager.default.removeItem(atPath: dir)
        let report: [String: Any] = [
            "records": count, "threads": threads,
            "ratios": [
                "repeated_over_distinct_records_per_cpu_second": BenchReport.median(ratios),
                "no_history_repeated_over_distinct_records_per_cpu_second": BenchReport.median(offRatios),
            ],
            "distinct_records_per_cpu_second": BenchReport.median(distinctRates),
            "repeated_records_per_cpu_second": BenchReport.median(repeatedRates),
            "ratio_runs": ratios,
            "no_history_ratio_runs": offRatios,
        ]
        print(
            String(
                format: "repeats: median ratio %.3f over %d pairs (--no-history: %.3f)", BenchReport.median(ratios),
                ratios.count, BenchReport.median(offRatios)))
        if let json {
            let data = try JSONSerialization.data(
                withJSONObject: ["repeats": report], options: [.prettyPrinted, .sortedKeys])
            try data.write(to: URL(fileURLWithPath: json))
        }
        guard let check else { return 0 }
        let data = try Data(contentsOf: URL(fileURLWithPath: check))
        guard let t = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let section = t["repeats"] as? [String: Any]
        else { throw BenchError("\(check) has no \"repeats\" section") }
        let flat = BenchReport.flatten(report)
        let failures = checkSection(section, flat)
        printTargets(section) { flat[$0] }
        return failures == 0 ? 0 : 1
    } catch {
        print("receiptflow-bench repeats: \(error)")
        return 1
    }
}
