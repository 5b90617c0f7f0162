import Foundation

let jwsUsage = """
    usage: receiptflow-bench jws [--count N] [--seed S] [--out DIR] [--threads N] [--repeat R]
                                 [--ceiling-seconds S] [--json FILE] [--check FILE] [--peer] [--peer-limit N]
           receiptflow-bench jws --write DIR

    End to end over a generated JWS corpus (made in --out if absent: about N JWS, default 10,000, seed 1; bare
    signed transactions, notification bodies with a nested transaction and renewal info, pages of
    signedTransactions, about 3% bad): each run exports it through ExportPipeline (zstd NDJSON in, Parquet out,
    verification on, --threads threads) and is compared with a plain C loop doing the work every JWS needs
    (Benchmarks/CReceiptLoop) and with OpenSSL's ES256 verification (EVP_DigestVerify of P-256 over SHA-256) on
    the same threads, both sampled right before and right after it. Then the verifier alone
    (JWSEvaluator on signed transactions) against the same check. --check compares the report with the "jws"
    section of a thresholds file and exits 1 on a regression. --peer runs Apple's App Store Server Library for
    Python (scripts/peers/jws_apple.py, online checks off) over the first --peer-limit JWS of the corpus (default
    2,000, at most 5,000) on as many processes. --write DIR writes 2,000 signed transactions (jws.txt) and their root (root.der).
    """

/// The `jws` mode: returns the exit status.
func runJWSBenchmark(_ args: [String]) -> Int32 {
    do {
        var count = 10_000
        var seed: UInt64 = 1
        var out = "bench-out"
        var threads = ProcessInfo.processInfo.activeProcessorCount
        var repeats = 2
        var ceilingSeconds = 1.0
        var json: String? = nil
        var check: String? = nil
        var peer = false
        var peerLimit = 2000
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < args.count else { throw BenchError("\(args[i - 1]) needs a value\n\n\(jwsUsage)") }
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--count": count = try RunOptions.number(try value(), "--count")
            case "--seed": seed = UInt64(try RunOptions.number(try value(), "--seed"))
            case "--out": out = try value()
            case "--threads": threads = try RunOptions.number(try value(), "--threads")
            case "--repeat": repeats = try RunOptions.number(try value(), "--repeat")
            case "--ceiling-seconds":
                guard let s = Double(try value()), s > 0 else { throw BenchError("--ceiling-seconds takes seconds") }
                ceilingSeconds = s
            case "--json": json = try value()
            case "--check": check = try value()
            case "--peer": peer = true
            case "--peer-limit": peerLimit = min(JWSCorpus.listed, try RunOptions.number(try value(), "--peer-limit"))
            case "--write":
                let dir = try value()
                try writeJWSCorpus(count: 2000, directory: dir)
                print("jws: wrote 2000 signed transactions and their root to \(dir)")
                return 0
            case "-h", "--help":
                print(jwsUsage)
                return 0
            default: throw BenchError("unknown option \(args[i])\n\n\(jwsUsage)")
            }
            i += 1
        }
        // The thresholds are read first, so that a wrong path fails before minutes of measurement.
        let thresholds: [String: Any]? = try check.map { path in
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard let t = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                let section = t["jws"] as? [String: Any]
            else { throw BenchError("\(path) has no \"jws\" section") }
            return section
        }
        let corpus = try JWSCorpus.prepare(directory: out, jws: count, seed: seed)
        let ceiling = try ES256Ceiling(corpus: corpus)
        let loadBefore = Measure.loadAverage()
        FileHandle.standardError.write(Data("JWS end to end and the ES256 ceiling (\(threads) threads)...\n".utf8))
        // The plain C loop (CLoopBench.swift) brackets every run as the ceiling samples do.
        var samples = [ceiling.sample(threads: threads, seconds: ceilingSeconds)]
        var cLoops = [try runCLoopJWS(corpus, threads: threads)]
        var runs: [JWSEndToEndResult] = []
        for _ in 0..<repeats {
            var r = try runJWSEndToEnd(corpus, threads: threads, outDir: out + "/jws-parquet")
            let after = ceiling.sample(threads: threads, seconds: ceilingSeconds)
            cLoops.append(try runCLoopJWS(corpus, threads: threads))
            // Each run against the faster sample around it: a sample something else disturbed can only read slow.
            let best = samples.last!.perSecond >= after.perSecond ? samples.last! : after
            r.ceilingPerSecond = best.perSecond
            r.ceilingCPUMicros = min(samples.last!.busyCPUMicros, after.busyCPUMicros)
            runs.append(r)
            samples.append(after)
        }
        try? FileManager.default.removeItem(atPath: out + "/jws-parquet")
        try checkCLoopCoverage(cLoops, records: corpus.lines, valid: runs[0].valid)
        // The same lines on both sides: the C loop's CPU time (the faster pass around the run) over the run's.
        let overCLoop = runs.indices.map { min(cLoops[$0].cpuSeconds, cLoops[$0 + 1].cpuSeconds) / runs[$0].cpuSeconds }
        let fastestCLoop = cLoops.min { $0.cpuSeconds < $1.cpuSeconds }!
        let ceilingFailures = samples.reduce(0) { $0 + $1.failures }
        let verifier = try runJWSBench(count: 2000, threads: threads, seconds: ceilingSeconds)

        let median = { (v: [Double]) in BenchReport.median(v) }
        var report: [String: Any] = [
            "threads": threads,
            "load_before": loadBefore, "load_after": Measure.loadAverage(),
            "corpus": [
                "lines": corpus.lines, "jws": corpus.jws, "compressed_bytes": corpus.compressedBytes,
                "path": corpus.path,
            ] as [String: Any],
            "e2e": [
                "runs": runs.count, "valid": runs[0].valid, "rejected": runs[0].jws - runs[0].valid,
                "transactions": runs[0].transactions,
                "verified_per_second": median(runs.map(\.verifiedPerSecond)),
                "jws_per_second": median(runs.map { Double($0.jws) / $0.wallSeconds }),
                "cpu_us_per_verified": median(runs.map(\.cpuMicrosPerVerified)),
                "allocations_per_jws": median(runs.map { Double($0.allocations) / Double($0.jws) }),
                "peak_rss_mb": runs.map(\.peakRSSMB).max() ?? 0,
            ] as [String: Any],
            "ceiling": [
                "es256_per_second": samples.map(\.perSecond).max() ?? 0,
                "es256_busy_cpu_us": samples.map(\.busyCPUMicros).min() ?? 0,
                "samples_per_second": samples.map(\.perSecond), "failures": ceilingFailures,
            ] as [String: Any],
            "ratios": [
                "e2e_over_es256_ceiling_wall": median(runs.map(\.ratioWall)),
                "e2e_over_es256_ceiling_cpu": median(runs.map(\.ratioCPU)),
                "e2e_over_es256_ceiling_wall_runs": runs.map(\.ratioWall),
                "e2e_over_es256_ceiling_cpu_runs": runs.map(\.ratioCPU),
                // The best run by CPU time, each against the faster ES256 sample around it: the steadier reading on
                // a shared machine, where noise only adds time (the gate).
                "best_paired_e2e_over_es256_ceiling_cpu": runs.map(\.ratioCPU).max() ?? 0,
                // The export over the plain C loop by CPU time, each run against the faster pass around it:
                // the median, each run and the best (the gate).
                "e2e_over_c_loop_cpu": median(overCLoop), "e2e_over_c_loop_cpu_runs": overCLoop,
                "best_paired_e2e_over_c_loop_cpu": overCLoop.max() ?? 0,
                "verifier_over_es256_ceiling_wall": verifier.ratioWall,
                "verifier_over_es256_ceiling_cpu": verifier.ratioCPU,
            ] as [String: Any],
            "c_loop": [
                "jws": fastestCLoop.decoded, "signature_ok": fastestCLoop.signatureOK, "chain_ok": fastestCLoop.valid,
                "cpu_us_per_valid": fastestCLoop.cpuSeconds * 1e6 / Double(max(fastestCLoop.valid, 1)),
                "all_cpu_seconds": cLoops.map(\.cpuSeconds),
            ] as [String: Any],
            "verifier": [
                "jws_per_second": verifier.evaluatorPerSecond, "cpu_us_per_jws": verifier.evaluatorCPUMicros,
                "failures": verifier.failures,
            ] as [String: Any],
        ]
        if peer {
            let p = try runApplePeer(corpus, threads: threads, limit: peerLimit)
            let e2eCPU = median(runs.map(\.cpuMicrosPerVerified))
            report["peer"] =
                [
                    "apple_python_verified_per_second": p.perSecond, "apple_python_cpu_us_per_verified": p.cpuMicros,
                    "apple_python_verified": p.verified, "apple_python_rejected": p.rejected,
                    "e2e_over_apple_python_wall": median(runs.map(\.verifiedPerSecond)) / p.perSecond,
                    "e2e_over_apple_python_cpu": p.cpuMicros / e2eCPU,
                ] as [String: Any]
        }
        printJWSReport(report)
        if let json {
            let data = try JSONSerialization.data(
                withJSONObject: ["jws": report], options: [.prettyPrinted, .sortedKeys])
            try data.write(to: URL(fileURLWithPath: json))
            print("wrote \(json)")
        }
        if ceilingFailures > 0 || verifier.failures > 0 {
            print("receiptflow-bench jws: a ceiling or verifier check failed to verify a genuine JWS")
            return 1
        }
        if let check, let section = thresholds {
            print("")
            let failures = checkSection(section, BenchReport.flatten(report))
            if failures > 0 {
                print("receiptflow-bench jws: \(failures) regression(s) against \(check)")
                return 1
            }
            print("receiptflow-bench jws: no regression against \(check)")
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("receiptflow-bench jws: \(error)\n".utf8))
        return 1
    }
}

/// Compares `flat` with the `min` and `max` bounds of a thresholds section; prints each check, returns the failures.
func checkSection(_ section: [String: Any], _ flat: [String: Double]) -> Int {
    var failures = 0
    for (bound, isMin) in [("min", true), ("max", false)] {
        for (key, limit) in (section[bound] as? [String: Any] ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let limit = (limit as? NSNumber)?.doubleValue else { continue }
            guard let v = flat[key] else {
                print("FAIL  \(key): not in the report")
                failures += 1
                continue
            }
            let ok = isMin ? v >= limit : v <= limit
            print(
                (ok ? "ok    " : "FAIL  ") + String(format: "%@ = %.4f (%@ %.4f)", key, v, isMin ? ">=" : "<=", limit))
            if !ok { failures += 1 }
        }
    }
    return failures
}

private func printJWSReport(_ r: [String: Any]) {
    func d(_ path: String) -> Double { BenchReport.flatten(r)[path] ?? .nan }
    print(
        String(
            format:
                "JWS corpus: %.0f lines, %.0f JWS (%.0f valid, %.0f rejected), %.0f transaction rows; %.0f threads, "
                + "load %.1f -> %.1f",
            d("corpus.lines"), d("corpus.jws"), d("e2e.valid"), d("e2e.rejected"), d("e2e.transactions"), d("threads"),
            d("load_before"), d("load_after")))
    print(
        String(
            format: "end to end (export, Parquet, verify on): %.0f verified JWS/s (%.0f JWS/s), %.1f CPU µs per "
                + "verified JWS, %.1f allocations per JWS, peak RSS %.0f MB",
            d("e2e.verified_per_second"), d("e2e.jws_per_second"), d("e2e.cpu_us_per_verified"),
            d("e2e.allocations_per_jws"), d("e2e.peak_rss_mb")))
    print(
        String(
            format: "ES256 ceiling (EVP_DigestVerify, P-256): %.0f/s, %.1f CPU µs each with every thread busy",
            d("ceiling.es256_per_second"), d("ceiling.es256_busy_cpu_us")))
    let runsWall = (r["ratios"] as? [String: Any])?["e2e_over_es256_ceiling_wall_runs"] as? [Double] ?? []
    let runsCPU = (r["ratios"] as? [String: Any])?["e2e_over_es256_ceiling_cpu_runs"] as? [Double] ?? []
    print(
        String(
            format: "end to end / ES256 ceiling: %.3f by wall clock, %.3f by CPU time (median; best %.3f; runs %@)",
            d("ratios.e2e_over_es256_ceiling_wall"), d("ratios.e2e_over_es256_ceiling_cpu"),
            d("ratios.best_paired_e2e_over_es256_ceiling_cpu"),
            zip(runsWall, runsCPU).map { String(format: "%.3f / %.3f", $0, $1) }.joined(separator: ", ")))
    let runsC = (r["ratios"] as? [String: Any])?["e2e_over_c_loop_cpu_runs"] as? [Double] ?? []
    print(
        String(
            format:
                "end to end / plain C loop (%.1f CPU µs per valid JWS, %.0f JWS): %.3f by CPU time (median; best %.3f; runs %@)",
            d("c_loop.cpu_us_per_valid"), d("c_loop.jws"), d("ratios.e2e_over_c_loop_cpu"),
            d("ratios.best_paired_e2e_over_c_loop_cpu"),
            runsC.map { String(format: "%.3f", $0) }.joined(separator: ", ")))
    print(
        String(
            format: "verifier alone (JWSEvaluator, signed transactions): %.0f JWS/s, %.1f CPU µs: %.3f of the ceiling "
                + "by wall clock, %.3f by CPU time",
            d("verifier.jws_per_second"), d("verifier.cpu_us_per_jws"), d("ratios.verifier_over_es256_ceiling_wall"),
            d("ratios.verifier_over_es256_ceiling_cpu")))
    if r["peer"] != nil {
        print(
            String(
                format: "Apple's App Store Server Library (Python, offline): %.0f verified JWS/s, %.0f CPU µs each "
                    + "(%.0f verified, %.0f rejected); end to end is %.1fx faster by wall clock, %.1fx by CPU time",
                d("peer.apple_python_verified_per_second"), d("peer.apple_python_cpu_us_per_verified"),
                d("peer.apple_python_verified"), d("peer.apple_python_rejected"), d("peer.e2e_over_apple_python_wall"),
                d("peer.e2e_over_apple_python_cpu")))
    }
}

/// Runs scripts/peers/jws_apple.py over the first `limit` JWS of the corpus.
private func runApplePeer(_ corpus: JWSCorpus, threads: Int, limit: Int) throws -> (
    perSecond: Double, cpuMicros: Double, verified: Int, rejected: Int
) {
    let root = URL(fileURLWithPath: corpus.path).deletingLastPathComponent().appendingPathComponent("jws-root.der")
    try Data(corpus.rootDER).write(to: root)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = [
        "python3", "scripts/peers/jws_apple.py", corpus.listPath, root.path, JWSCorpus.bundleID,
        "--app-apple-id", String(JWSCorpus.appAppleID), "--processes", String(threads), "--limit", String(limit),
    ]
    let pipe = Pipe()
    p.standardOutput = pipe
    FileHandle.standardError.write(Data("Apple's Python library over \(limit) JWS...\n".utf8))
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0,
        let o = try JSONSerialization.jsonObject(with: data) as? [String: Any],
        let perSecond = (o["verified_per_second"] as? NSNumber)?.doubleValue,
        let cpu = (o["cpu_us_per_verified"] as? NSNumber)?.doubleValue
    else {
        throw BenchError(
            "scripts/peers/jws_apple.py failed (status \(p.terminationStatus)); it needs "
                + "`pip install app-store-server-library` and runs from the package root")
    }
    return (
        perSecond, cpu, (o["verified"] as? NSNumber)?.intValue ?? 0, (o["rejected"] as? NSNumber)?.intValue ?? 0
    )
}
