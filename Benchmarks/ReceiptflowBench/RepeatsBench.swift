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
    of the repeated corpus over the distinct one. --check reads the "repeats" section of a thresholds file.
    """

/// One end-to-end run over an NDJSON file: records and the process CPU time they took.
private func runRepeatsEndToEnd(path: String, anchors: TrustAnchors, threads: Int, outDir: String) throws -> (
    records: Int, cpuSeconds: Double, wallSeconds: Double
) {
    // A fresh cache per run: no run reuses what another verified.
    let cache = ChainCache(anchors: anchors)
    var config = PipelineConfig()
    config.inputs = [path]
    config.threads = threads
    config.verify = true
    try? FileManager.default.removeItem(atPath: outDir)
    let sink = try makeSink(format: .parquet, directory: outDir, metadata: RunMetadata())
    let pipeline = ExportPipeline(config: config, sink: sink, cache: cache)
    let c0 = Measure.processCPU()
    let t0 = Measure.wall()
    let outcome = pipeline.run()
    let wall = Measure.wall() - t0
    let cpu = Measure.processCPU() - c0
    guard case .completed(let r) = outcome else { throw BenchError("the repeats run did not complete: \(outcome)") }
    return (r.counts.records, cpu, wall)
}

/// Writes the two corpora (when absent): `count` distinct records, and the first `count / 4` of them four times
/// each in a shuffled order. Returns their paths.
private func prepareRepeatCorpora(directory: String, count: Int, seed: UInt64) throws -> (
    distinct: String, repeated: String, rootDER: [UInt8]
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
    return (distinct, repeated, pki.root.der)
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
        let anchors = try TrustAnchors(certificates: [(source: "bench-test-root", bytes: corpora.rootDER)])
        let dir = out + "/repeats-parquet"
        var ratios: [Double] = []
        var distinctRates: [Double] = []
        var repeatedRates: [Double] = []
        // A warm-up pair, not counted: the first runs of a process pay for its allocator's and caches' growth.
        _ = try runRepeatsEndToEnd(path: corpora.distinct, anchors: anchors, threads: threads, outDir: dir)
        _ = try runRepeatsEndToEnd(path: corpora.repeated, anchors: anchors, threads: threads, outDir: dir)
        for _ in 0..<max(repeats, 1) {
            let d = try runRepeatsEndToEnd(path: corpora.distinct, anchors: anchors, threads: threads, outDir: dir)
            let r = try runRepeatsEndToEnd(path: corpora.repeated, anchors: anchors, threads: threads, outDir: dir)
            guard d.records == r.records else {
                throw BenchError("the corpora hold \(d.records) and \(r.records) records; they must be the same")
            }
            let dRate = Double(d.records) / d.cpuSeconds
            let rRate = Double(r.records) / r.cpuSeconds
            distinctRates.append(dRate)
            repeatedRates.append(rRate)
            ratios.append(rRate / dRate)
            print(
                String(
                    format: "repeats: distinct %.0f records/CPU s, repeated x4 %.0f records/CPU s, ratio %.3f",
                    dRate, rRate, rRate / dRate))
        }
        try? FileManager.default.removeItem(atPath: dir)
        let report: [String: Any] = [
            "records": count, "threads": threads,
            "ratios": ["repeated_over_distinct_records_per_cpu_second": BenchReport.median(ratios)],
            "distinct_records_per_cpu_second": BenchReport.median(distinctRates),
            "repeated_records_per_cpu_second": BenchReport.median(repeatedRates),
            "ratio_runs": ratios,
        ]
        print(String(format: "repeats: median ratio %.3f over %d pairs", BenchReport.median(ratios), ratios.count))
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
