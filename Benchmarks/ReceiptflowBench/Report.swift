import Foundation

/// The whole run's numbers: printed as a table for people, written as JSON for machines, checked against
/// committed thresholds (ratios, allocation counts and memory, never absolute times).
struct BenchReport {
    var corpus: Corpus
    var threads: Int
    var loadBefore: Double
    var loadAfter: Double
    var ceilingBefore: CeilingResult
    var ceilingAfter: CeilingResult
    /// Both ceilings before, between and after the end-to-end runs (`e2e.count + 1` samples).
    var ceilingSamples: [CeilingSample]
    var e2e: [EndToEndResult]
    var stages: StageResult
    /// How many times each end-to-end run read the corpus (`--copies`).
    var copies = 1
    /// The plain C loop's passes: before, between and after the `--no-history` runs, then after each default
    /// export run (`2 e2e.count + 1` passes).
    var cLoops: [CLoopResult] = []
    /// The default export's runs (history on), after the `--no-history` ones.
    var defaultExport: [HistoryRun] = []
    /// `--no-history` and the default export against the C loop on the customer-history corpus, after the above.
    var customers: CustomerRuns? = nil

    /// The best end-to-end repetition (least disturbed by other processes).
    var bestE2E: EndToEndResult { e2e.max { $0.receiptsPerSecond < $1.receiptsPerSecond }! }
    /// The bare ceiling: RSA-2048 public-key operations per second on all threads (the stricter of the two ways
    /// `CeilingResult` measures), the better of the runs before and after the end-to-end runs: like the best
    /// end-to-end run, the one least disturbed by other processes (a mean would let one disturbed ceiling run
    /// flatter the ratio). The paired ratios below use every sample instead.
    var ceilingPerSecond: Double { max(ceilingBefore.modExpPerSecond, ceilingAfter.modExpPerSecond) }
    /// The same with `EVP_PKEY_verify`: RSA-2048 verifications through OpenSSL, what `openssl speed rsa2048` reports.
    var evpCeilingPerSecond: Double { max(ceilingBefore.perSecond, ceilingAfter.perSecond) }
    var rsaCPUMicros: Double { min(ceilingBefore.cpuMicrosPerVerify, ceilingAfter.cpuMicrosPerVerify) }
    var modExpCPUMicros: Double { min(ceilingBefore.modExpCPUMicros, ceilingAfter.modExpCPUMicros) }
    /// CPU µs of one bare RSA operation while every thread runs them (comparable with the pipeline's CPU µs per
    /// receipt, which is also measured with every thread busy).
    var modExpBusyCPUMicros: Double { min(ceilingBefore.modExpBusyCPUMicros, ceilingAfter.modExpBusyCPUMicros) }
    /// The verifier's RSA check (`EVP_PKEY_verify` with a kept context), one thread.
    var verifierOpCPUMicros: Double { min(ceilingBefore.verifierOpCPUMicros, ceilingAfter.verifierOpCPUMicros) }

    /// Each end-to-end run against the faster of the two ceiling samples around it: wall clock and CPU time ratios,
    /// to the bare operation (`wall`, `cpu`) and to `EVP_PKEY_verify` (`evpWall`, `evpCPU`). A sample that something
    /// else disturbed can only read slow, so the faster one is the better estimate of the machine at that moment,
    /// and taking it never flatters the ratio. (The mean of the two would let one disturbed sample move a short
    /// run's median by several points.)
    var pairedRatios: [(wall: Double, cpu: Double, evpWall: Double, evpCPU: Double)] {
        e2e.indices.map { i in
            let a = ceilingSamples[i]
            let b = ceilingSamples[i + 1]
            let rps = e2e[i].receiptsPerSecond
            let us = e2e[i].cpuMicrosPerReceipt
            return (
                rps / max(a.perSecond, b.perSecond), min(a.busyCPUMicros, b.busyCPUMicros) / us,
                rps / max(a.evpPerSecond, b.evpPerSecond), min(a.evpBusyCPUMicros, b.evpBusyCPUMicros) / us
            )
        }
    }

    static func median(_ v: [Double]) -> Double {
        let s = v.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// One-thread CPU µs per receipt of the work no exporter can skip on this corpus, and their sum.
    var floorParts: [(name: String, label: String, micros: Double)] {
        var parts: [(String, String, Double)] = []
        if let z = stages.floors.first(where: { $0.name == "zstd" }) {
            parts.append(("zstd", z.label, z.cpuMicrosPerItem))
        }
        if let h = stages.stage("hash") {
            // Per receipt of the corpus (the stage counts only the receipts that decode).
            parts.append(("hash", h.label, h.cpuSeconds * 1e6 / Double(max(stages.records, 1))))
        }
        if let d = stages.floors.first(where: { $0.name == "digest" }) {
            parts.append(("digest", d.label, d.cpuSeconds * 1e6 / Double(max(stages.records, 1))))
        }
        let rsaShare = Double(stages.rsaVerifications) / Double(max(stages.records, 1))
        parts.append(
            (
                "rsa",
                "RSA public-key operation (as verify computes it) x \(String(format: "%.3f", rsaShare)) per receipt",
                verifierOpCPUMicros * rsaShare
            ))
        return parts
    }

    /// Nested dictionary for `--json` (also flattened, with dots, for `--check`).
    func json() -> [String: Any] {
        let best = bestE2E
        var stageList: [[String: Any]] = []
        for s in stages.stages {
            stageList.append([
                "name": s.name, "label": s.label, "items": s.items, "bytes": s.bytes, "cpu_seconds": s.cpuSeconds,
                "wall_seconds": s.wallSeconds, "cpu_us_per_receipt": s.cpuMicrosPerItem,
                "receipts_per_cpu_second": s.itemsPerCPUSecond, "mb_per_cpu_second": s.megabytesPerCPUSecond,
                "allocations": s.allocations, "allocations_per_receipt": s.allocationsPerItem,
            ])
        }
        let parse = stages.stage("parse")!
        let verify = stages.stage("verify")!
        let worker = stages.stage("worker")!
        let write = stages.stage("write")!
        let floor = min(ceilingBefore.allocationsPerVerify, ceilingAfter.allocationsPerVerify)
        let verifyPerCall = Double(verify.allocations) / Double(max(stages.verifyCalls, 1))
        // Exact: every allocation inside the verify calls that accepted a receipt, OpenSSL's included (the shim
        // counts every malloc in the process).
        let verifyValid = Double(stages.validVerifyAllocations) / Double(max(stages.validVerifications, 1))
        let e2ePerRecord = Double(best.allocations) / Double(max(best.records, 1))
        let floorTotal = floorParts.reduce(0) { $0 + $1.micros }
        let paired = pairedRatios
        var report: [String: Any] = [
            "machine": [
                "cores": ProcessInfo.processInfo.activeProcessorCount, "threads": threads,
                "load_average_before": loadBefore, "load_average_after": loadAfter,
            ],
            "corpus": [
                "path": corpus.path, "receipts": stages.records, "seed": corpus.seed,
                "bad_fraction": corpus.badFraction,
                "compressed_bytes": corpus.compressedBytes, "decompressed_bytes": stages.decompressedBytes,
                "transactions": stages.transactions,
            ],
            "ceiling": [
                "rsa_bits": ceilingBefore.keyBits, "threads": threads,
                "verifications_per_second": ceilingPerSecond,
                "verifications_per_second_before": ceilingBefore.perSecond,
                "verifications_per_second_after": ceilingAfter.perSecond, "cpu_us_per_verify": rsaCPUMicros,
                "allocations_per_verify": floor, "bn_mod_exp_mont_cpu_us": modExpCPUMicros,
                "bn_mod_exp_mont_allocations": min(ceilingBefore.modExpAllocations, ceilingAfter.modExpAllocations),
                "bn_mod_exp_mont_per_second": ceilingPerSecond,
                "bn_mod_exp_mont_per_second_before": ceilingBefore.modExpPerSecond,
                "bn_mod_exp_mont_per_second_after": ceilingAfter.modExpPerSecond,
                "bn_mod_exp_mont_busy_cpu_us": modExpBusyCPUMicros,
                "verifier_rsa_cpu_us": verifierOpCPUMicros,
                "verifier_rsa_allocations": min(
                    ceilingBefore.verifierOpAllocations, ceilingAfter.verifierOpAllocations),
                "evp_pkey_verify_per_second": evpCeilingPerSecond,
                "evp_pkey_verify_busy_cpu_us": min(ceilingBefore.busyCPUMicros, ceilingAfter.busyCPUMicros),
            ],
            "floors": Dictionary(uniqueKeysWithValues: floorParts.map { ($0.name + "_cpu_us", $0.micros) }).merging(
                [
                    "total_cpu_us": floorTotal, "max_e2e_over_ceiling": modExpCPUMicros / floorTotal,
                ]
            ) { a, _ in a },
            "e2e": [
                "threads": best.threads, "copies": copies, "receipts": best.records, "transactions": best.transactions,
                "valid": best.valid, "wall_seconds": best.wallSeconds, "receipts_per_second": best.receiptsPerSecond,
                "mb_per_second": Double(best.decompressedBytes) / 1e6 / best.wallSeconds,
                "compressed_mb_per_second": Double(best.compressedBytes) / 1e6 / best.wallSeconds,
                "cpu_seconds": best.cpuSeconds, "cpu_us_per_receipt": best.cpuMicrosPerReceipt,
                "writer_cpu_us_per_receipt": best.writerCPUSeconds * 1e6 / Double(max(best.records, 1)),
                "allocations": best.allocations, "allocations_per_receipt": e2ePerRecord,
                "peak_rss_mb": e2e.map(\.peakRSSMB).max()!, "output_bytes": best.outputBytes,
                "chain_cache_hits": best.cacheHits, "chain_cache_misses": best.cacheMisses,
                "all_receipts_per_second": e2e.map(\.receiptsPerSecond),
                "all_cpu_us_per_receipt": e2e.map(\.cpuMicrosPerReceipt),
                "paired_ratios_wall": paired.map(\.wall), "paired_ratios_cpu": paired.map(\.cpu),
                "paired_ratios_evp_wall": paired.map(\.evpWall), "paired_ratios_evp_cpu": paired.map(\.evpCPU),
                "ceiling_samples_per_second": ceilingSamples.map(\.perSecond),
                "evp_ceiling_samples_per_second": ceilingSamples.map(\.evpPerSecond),
                "ceiling_samples_busy_cpu_us": ceilingSamples.map(\.busyCPUMicros),
                "evp_ceiling_samples_busy_cpu_us": ceilingSamples.map(\.evpBusyCPUMicros),
            ],
            "stages": stageList,
            "stage_pass": ["peak_rss_mb": stages.peakRSSMB, "chain_cache_misses": stages.cacheMissesDuringTimedPass],
            "ratios": [
                // The target: end to end over the RSA-only ceiling, RSA-2048 verifications through OpenSSL on as
                // many threads (EVP_PKEY_verify, what `openssl speed rsa2048` reports), each run against the faster
                // of the ceiling samples right before and after it; the median over the runs. Wall clock, and CPU time
                // (robust on a busy machine: CPU µs of one verification with every thread busy / pipeline CPU µs
                // per receipt with every thread busy).
                "e2e_over_evp_ceiling_wall": Self.median(paired.map(\.evpWall)),
                "e2e_over_evp_ceiling_cpu": Self.median(paired.map(\.evpCPU)),
                // The best of the runs by the same pairing: what the pipeline reaches when no other load slowed
                // the run more than the ceiling samples around it. Noise on a shared machine only ever adds time,
                // and not to the pipeline and the ceiling alike, so the best paired run is the steadier reading of
                // the pipeline's speed; the median shows the spread.
                "best_paired_e2e_over_evp_ceiling_cpu": paired.map(\.evpCPU).max() ?? 0,
                // The stricter reading: the same against the bare operation s^e mod n (BN_mod_exp_mont).
                "e2e_over_ceiling_wall": Self.median(paired.map(\.wall)),
                "e2e_over_ceiling_cpu": Self.median(paired.map(\.cpu)),
                // The fastest run over the fastest of the first and last ceiling samples, which may lie minutes
                // apart: an optimistic reading, kept for comparison.
                "best_e2e_over_best_ceiling_wall": best.receiptsPerSecond / ceilingPerSecond,
                "best_e2e_over_best_ceiling_cpu": modExpBusyCPUMicros / best.cpuMicrosPerReceipt,
                // The same way against EVP_PKEY_verify.
                "best_e2e_over_best_evp_ceiling_wall": best.receiptsPerSecond / evpCeilingPerSecond,
                // One core: the worker alone (scan..extract) against the RSA operation alone.
                "worker_over_rsa_cpu": modExpCPUMicros / worker.cpuMicrosPerItem,
                // The pipeline against the RSA work it does itself (the verifier's EVP_PKEY_verify with a kept
                // context): how much of the pipeline's CPU is that work. Not a target; shown so that the RSA
                // method's cost and the pipeline's overhead can be told apart. Its one-thread cost is scaled to all threads busy as
                // the ceiling's is, and counted for the receipts that reach RSA.
                "e2e_own_rsa_share_cpu": verifierOpCPUMicros * modExpBusyCPUMicros / modExpCPUMicros
                    * Double(stages.rsaVerifications) / Double(max(stages.records, 1)) / best.cpuMicrosPerReceipt,
            ],
            "allocations": [
                "parse_per_receipt": parse.allocationsPerItem,
                "verify_per_call": verifyPerCall,
                "verify_per_valid_receipt": verifyValid,
                // Allocations in the real worker beyond those of the parse + verify pass (<= 0: none of its own).
                "worker_beyond_parse_verify_per_receipt": Double(
                    worker.allocations - stages.stage("verify")!.allocations - parse.allocations)
                    / Double(max(worker.items, 1)),
                "openssl_floor_per_rsa_verify": floor,
                "worker_per_receipt": worker.allocationsPerItem,
                "write_per_transaction_row": Double(write.allocations) / Double(max(stages.transactions, 1)),
                "e2e_per_receipt": e2ePerRecord,
            ],
        ]
        report.merge(cLoopJSON) { a, _ in a }
        report.merge(customerJSON) { a, _ in a }
        report["ratios"] = (report["ratios"] as! [String: Double]).merging(cLoopRatios) { a, _ in a }
            .merging(customerRatios) { a, _ in a }
        return report
    }

    func printTable() {
        let best = bestE2E
        func row(_ name: String, _ rps: Double, _ mbps: Double?, _ us: Double?, _ allocs: Double?, _ note: String = "")
        {
            let mb = mbps.map { String(format: "%9.1f", $0) } ?? String(repeating: " ", count: 9)
            let u = us.map { String(format: "%9.2f", $0) } ?? String(repeating: " ", count: 9)
            let a = allocs.map { String(format: "%9.3f", $0) } ?? String(repeating: " ", count: 9)
            print(
                name.padding(toLength: 52, withPad: " ", startingAt: 0) + String(format: "%12.0f", rps) + mb + u + a
                    + "  " + note)
        }
        print(
            String(
                format:
                    "receiptflow-bench: %d receipts (%d transactions), %.1f MB zstd -> %.1f MB NDJSON, %d threads on %d cores, load %.1f -> %.1f",
                stages.records, stages.transactions, Double(corpus.compressedBytes) / 1e6,
                Double(stages.decompressedBytes) / 1e6, threads, ProcessInfo.processInfo.activeProcessorCount,
                loadBefore, loadAfter))
        print("")
        print(
            "stage (one thread, CPU time)".padding(toLength: 52, withPad: " ", startingAt: 0)
                + "  receipts/s     MB/s  µs/rcpt allocs/rc")
        for s in stages.stages where s.name != "worker" {
            let indent = s.name == "read" || s.name == "keys" ? "  " : ""
            row(
                indent + s.label, s.itemsPerCPUSecond, s.name == "write" ? nil : s.megabytesPerCPUSecond,
                s.cpuMicrosPerItem, s.allocationsPerItem,
                s.name == "write"
                    ? String(
                        format: "%.4f allocs per transaction row",
                        Double(s.allocations) / Double(max(stages.transactions, 1)))
                    : "")
        }
        if let w = stages.stage("worker") {
            row(w.label, w.itemsPerCPUSecond, w.megabytesPerCPUSecond, w.cpuMicrosPerItem, w.allocationsPerItem)
        }
        row(
            "RSA-2048 EVP_PKEY_verify alone", 1e6 / rsaCPUMicros, nil, rsaCPUMicros,
            min(ceilingBefore.allocationsPerVerify, ceilingAfter.allocationsPerVerify), "OpenSSL's own allocations")
        row(
            "RSA-2048 BN_mod_exp_mont alone (kept contexts)", 1e6 / modExpCPUMicros, nil, modExpCPUMicros,
            min(ceilingBefore.modExpAllocations, ceilingAfter.modExpAllocations), "s^e mod n, OpenSSL's (the ceiling)")
        row(
            "RSA-2048 check as verify computes it", 1e6 / verifierOpCPUMicros, nil, verifierOpCPUMicros,
            min(ceilingBefore.verifierOpAllocations, ceilingAfter.verifierOpAllocations),
            "EVP_PKEY_verify, kept context")
        print("")
        print(
            "end to end (wall clock, \(threads) threads)".padding(toLength: 52, withPad: " ", startingAt: 0)
                + "  receipts/s     MB/s  µs/rcpt allocs/rc")
        row(
            copies == 1
                ? "receiptflow export (zstd NDJSON -> Parquet, verify)"
                : "receiptflow export, the corpus x \(copies) (verify)", best.receiptsPerSecond,
            Double(best.decompressedBytes) / 1e6 / best.wallSeconds, best.cpuMicrosPerReceipt,
            Double(best.allocations) / Double(max(best.records, 1)),
            String(format: "peak RSS %.0f MB; CPU µs", e2e.map(\.peakRSSMB).max()!))
        row(
            "ceiling: RSA-2048 s^e mod n on \(threads) threads", ceilingPerSecond, nil, modExpBusyCPUMicros, nil,
            String(format: "before %.0f, after %.0f", ceilingBefore.modExpPerSecond, ceilingAfter.modExpPerSecond))
        row(
            "  EVP_PKEY_verify on \(threads) threads (openssl speed)", evpCeilingPerSecond, nil,
            min(ceilingBefore.busyCPUMicros, ceilingAfter.busyCPUMicros), nil,
            String(format: "before %.0f, after %.0f", ceilingBefore.perSecond, ceilingAfter.perSecond))
        print("")
        print(
            "floors: work no exporter can skip (one thread)".padding(toLength: 52, withPad: " ", startingAt: 0)
                + "                      µs/rcpt")
        for p in floorParts {
            print("  " + p.label.padding(toLength: 71, withPad: " ", startingAt: 0) + String(format: "%9.2f", p.micros))
        }
        let j = json()
        let ratios = j["ratios"] as! [String: Double]
        /// One ceiling's paired ratios: the medians, then each run and the ceiling samples.
        func pairedLines(_ title: String, _ key: String, _ runs: [(Double, Double)], _ samples: [Double]) {
            print(
                title
                    + String(
                        format: ": %.1f%% (wall clock)   %.1f%% (CPU time: RSA µs / pipeline µs per receipt)",
                        100 * ratios[key + "_wall"]!, 100 * ratios[key + "_cpu"]!))
            print(
                "  each run (wall / CPU): "
                    + runs.map { String(format: "%.1f%% / %.1f%%", 100 * $0.0, 100 * $0.1) }.joined(separator: ", ")
                    + "; ceiling samples (/s): " + samples.map { String(format: "%.0f", $0) }.joined(separator: ", "))
        }
        print("end to end / ceiling: the median of the runs, each against the faster ceiling sample around it")
        pairedLines(
            "  RSA-2048 verify through OpenSSL (EVP_PKEY_verify)", "e2e_over_evp_ceiling",
            pairedRatios.map { ($0.evpWall, $0.evpCPU) }, ceilingSamples.map(\.evpPerSecond))
        pairedLines(
            "  bare s^e mod n (BN_mod_exp_mont, the stricter reading)", "e2e_over_ceiling",
            pairedRatios.map { ($0.wall, $0.cpu) }, ceilingSamples.map(\.perSecond))
        print(
            String(
                format:
                    "  fastest run over the fastest first/last ceiling: %.1f%% wall, %.1f%% CPU (bare); %.1f%% wall (EVP_PKEY_verify)",
                100 * ratios["best_e2e_over_best_ceiling_wall"]!, 100 * ratios["best_e2e_over_best_ceiling_cpu"]!,
                100 * ratios["best_e2e_over_best_evp_ceiling_wall"]!))
        print(
            String(
                format: "  best run against the ceiling samples around it: %.1f%% (CPU time, EVP_PKEY_verify)",
                100 * ratios["best_paired_e2e_over_evp_ceiling_cpu"]!))
        print(
            String(
                format:
                    "the verifier's RSA work is %.1f%% of the pipeline's CPU time (its RSA check, not the ceiling's)",
                100 * ratios["e2e_own_rsa_share_cpu"]!))
        let fl = j["floors"] as! [String: Double]
        print(
            String(
                format:
                    "floors: %.2f µs per receipt in all: no exporter can exceed %.1f%% of the ceiling on this corpus",
                fl["total_cpu_us"]!, 100 * fl["max_e2e_over_ceiling"]!))
        let a = j["allocations"] as! [String: Double]
        print(
            String(
                format:
                    "allocations: parse %.4f/receipt; verify %.4f per accepted receipt, OpenSSL's included (EVP_PKEY_verify alone would make %.3f); worker beyond parse+verify %.4f/receipt; Parquet writer %.4f per transaction row",
                a["parse_per_receipt"]!, a["verify_per_valid_receipt"]!, a["openssl_floor_per_rsa_verify"]!,
                a["worker_beyond_parse_verify_per_receipt"]!, a["write_per_transaction_row"]!))
        print(
            String(
                format: "peak RSS: end to end %.1f MB (all threads), stage pass %.1f MB",
                e2e.map(\.peakRSSMB).max()!, stages.peakRSSMB))
        print(
            "all end-to-end runs (receipts/s): "
                + e2e.map { String(format: "%.0f", $0.receiptsPerSecond) }.joined(separator: ", "))
        printCLoop()
        printCustomers()
    }

    /// Compares the flattened JSON with `thresholds` (`{"min": {key: v}, "max": {key: v}}`); returns failures.
    func check(_ thresholds: [String: Any]) -> [String] {
        let flat = Self.flatten(json())
        printTargets(thresholds) { flat[$0] }
        var failures: [String] = []
        for (bound, isMin) in [("min", true), ("max", false)] {
            for (key, limit) in (thresholds[bound] as? [String: Any] ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let limit = (limit as? NSNumber)?.doubleValue else { continue }
                guard let v = flat[key] else {
                    failures.append("\(key): not in the report")
                    continue
                }
                let ok = isMin ? v >= limit : v <= limit
                let line = String(format: "%@ = %.4f (%@ %.4f)", key, v, isMin ? ">=" : "<=", limit)
                print((ok ? "ok    " : "FAIL  ") + line)
                if !ok { failures.append(line) }
            }
        }
        return failures
    }

    static func flatten(_ d: [String: Any], prefix: String = "") -> [String: Double] {
        var out: [String: Double] = [:]
        for (k, v) in d {
            let key = prefix.isEmpty ? k : prefix + "." + k
            if let sub = v as? [String: Any] {
                out.merge(flatten(sub, prefix: key)) { a, _ in a }
            } else if let list = v as? [[String: Any]] {
                for item in list {
                    if let name = item["name"] as? String {
                        out.merge(flatten(item, prefix: key + "." + name)) { a, _ in a }
                    }
                }
            } else if let n = v as? NSNumber, !(v is String) {
                out[key] = n.doubleValue
            }
        }
        return out
    }
}
