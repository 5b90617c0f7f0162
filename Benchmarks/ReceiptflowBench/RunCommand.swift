import Foundation

let runUsage = """
    usage: receiptflow-bench [run] [--count N] [--seed S] [--bad-fraction F] [--corpus FILE] [--out DIR]
                             [--threads N] [--repeat R] [--ceiling-seconds S] [--copies N] [--json FILE]
                             [--check FILE] [--customers N] [--customer-corpus FILE]
           receiptflow-bench parse | verify | sinks

    run (the default): per-stage costs on one thread, end to end through ExportPipeline on all threads
    (--no-history, then the default export with the history on), and on the same threads a plain C loop doing
    the work every record needs (Benchmarks/CReceiptLoop) and the RSA-2048 ceiling, over a generated corpus
    (made in --out if absent: 50,000 receipts, seed 2, bad fraction 0.05). --check compares ratios and
    allocation counts with a thresholds file, prints its goals beside, and exits 1 on a regression. --copies N makes each end-to-end run read the corpus N times in a row (N inputs), the
    steady state of a longer migration; the thresholds are set for the default, 1.

    Then --no-history and the default export against the C loop again, on a customer-history corpus, where
    receipts repeat their account's purchases as in real archives: `receiptflow generate --customers N
    --years 3 --seed S` (made in --out if absent with the same test CA: --customers 8000, about 105,000
    receipts), or --customer-corpus FILE made with that CA (`--ca-dir OUT/test-ca`).
    """

/// Options of the `run` mode.
struct RunOptions {
    var count = 50_000
    var seed: UInt64 = 2
    var badFraction = 0.05
    var corpus: String? = nil
    var out = "bench-out"
    var threads = ProcessInfo.processInfo.activeProcessorCount
    var repeats = 3
    var ceilingSeconds = 2.0
    var copies = 1
    var json: String? = nil
    var check: String? = nil
    var customers = 8000
    var customerCorpus: String? = nil

    init(_ args: [String]) throws {
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < args.count else { throw BenchError("\(args[i - 1]) needs a value\n\n\(runUsage)") }
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--count": count = try Self.number(try value(), "--count")
            case "--seed": seed = UInt64(try Self.number(try value(), "--seed"))
            case "--bad-fraction":
                guard let f = Double(try value()), (0...1).contains(f) else {
                    throw BenchError("--bad-fraction takes 0...1")
                }
                badFraction = f
            case "--corpus": corpus = try value()
            case "--out": out = try value()
            case "--threads": threads = try Self.number(try value(), "--threads")
            case "--repeat": repeats = max(1, try Self.number(try value(), "--repeat"))
            case "--ceiling-seconds":
                guard let s = Double(try value()), s > 0 else { throw BenchError("--ceiling-seconds takes seconds") }
                ceilingSeconds = s
            case "--copies": copies = try Self.number(try value(), "--copies")
            case "--json": json = try value()
            case "--check": check = try value()
            case "--customers": customers = try Self.number(try value(), "--customers")
            case "--customer-corpus": customerCorpus = try value()
            case "-h", "--help":
                print(runUsage)
                exit(0)
            default: throw BenchError("unknown option \(args[i])\n\n\(runUsage)")
            }
            i += 1
        }
    }

    static func number(_ s: String, _ name: String) throws -> Int {
        guard let n = Int(s), n > 0 else { throw BenchError("\(name) takes a positive whole number, got '\(s)'") }
        return n
    }
}

/// The `run` mode: returns the exit status.
func runBenchmark(_ args: [String]) -> Int32 {
    do {
        let o = try RunOptions(args)
        let thresholds: [String: Any]? = try o.check.map { path in
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard let t = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw BenchError("\(path) is not a JSON object")
            }
            return t
        }
        let corpus = try Corpus.prepare(
            directory: o.out, count: o.count, seed: o.seed, badFraction: o.badFraction, path: o.corpus)
        let anchors = try TrustAnchorsLoader.load(corpus)
        let customerCorpus = try CustomerCorpus.prepare(
            directory: o.out, customers: o.customers, years: 3, seed: o.seed, path: o.customerCorpus)
        let loadBefore = Measure.loadAverage()
        let fixture = try CeilingFixture(pki: corpus.pki)
        FileHandle.standardError.write(Data("stages (one thread)...\n".utf8))
        let stages = try StagePass(corpus: corpus, anchors: anchors, outDir: o.out + "/stage-parquet").run()

        FileHandle.standardError.write(Data("ceiling and end to end (\(o.threads) threads)...\n".utf8))
        // Ceiling, end-to-end run, ceiling, end-to-end run, ..., ceiling: every run is bracketed by two ceiling
        // samples, so its ratio compares numbers taken within seconds of each other (this VM's speed drifts by 10 to
        // 40% between minutes).
        // The plain C loop likewise brackets every export run, --no-history first, then the default export
        // (history on), whose larger heap would otherwise count in the --no-history runs' peak RSS.
        let before = runCeiling(fixture, threads: o.threads, seconds: o.ceilingSeconds)
        var samples = [CeilingSample(before)]
        var cLoops = [try runCLoop(corpus, threads: o.threads)]
        var e2e: [EndToEndResult] = []
        for k in 0..<o.repeats {
            e2e.append(
                try runEndToEnd(
                    corpus, threads: o.threads, outDir: o.out + "/e2e-parquet",
                    decompressedBytes: stages.decompressedBytes, copies: o.copies))
            if k < o.repeats - 1 {
                samples.append(sampleCeiling(fixture, threads: o.threads, seconds: o.ceilingSeconds))
                cLoops.append(try runCLoop(corpus, threads: o.threads))
            }
        }
        let after = runCeiling(fixture, threads: o.threads, seconds: o.ceilingSeconds)
        samples.append(CeilingSample(after))
        cLoops.append(try runCLoop(corpus, threads: o.threads))
        FileHandle.standardError.write(Data("the default export (history on) and the C loop...\n".utf8))
        var defaultExport: [HistoryRun] = []
        for _ in 0..<o.repeats {
            defaultExport.append(
                try runHistoryEndToEnd(
                    corpus, threads: o.threads, outDir: o.out + "/e2e-history-parquet", copies: o.copies,
                    history: true))
            cLoops.append(try runCLoop(corpus, threads: o.threads))
        }
        try? FileManager.default.removeItem(atPath: o.out + "/e2e-history-parquet")
        try checkCLoopCoverage(cLoops, records: e2e[0].records / o.copies, valid: e2e[0].valid / o.copies)
        FileHandle.standardError.write(
            Data("the customer-history corpus: --no-history, the default export and the C loop...\n".utf8))
        let customers = try runCustomerBench(
            customerCorpus, threads: o.threads, repeats: o.repeats, outDir: o.out + "/e2e-customers-parquet")
        let report = BenchReport(
            corpus: corpus, threads: o.threads, loadBefore: loadBefore, loadAfter: Measure.loadAverage(),
            ceilingBefore: before, ceilingAfter: after, ceilingSamples: samples, e2e: e2e, stages: stages,
            copies: o.copies, cLoops: cLoops, defaultExport: defaultExport, customers: customers)
        report.printTable()
        if let path = o.json {
            let data = try JSONSerialization.data(
                withJSONObject: report.json(), options: [.prettyPrinted, .sortedKeys])
            try data.write(to: URL(fileURLWithPath: path))
            print("wrote \(path)")
        }
        if let thresholds {
            print("")
            let failures = report.check(thresholds)
            if !failures.isEmpty {
                print("receiptflow-bench: \(failures.count) regression(s) against \(o.check!)")
                return 1
            }
            print("receiptflow-bench: no regression against \(o.check!)")
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("receiptflow-bench: \(error)\n".utf8))
        return 1
    }
}
