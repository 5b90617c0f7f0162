import Foundation

/// The export against the plain C loop (CLoopBench.swift), the baseline of the gates: the C loop's CPU µs per record
/// over the export's, each export run against the faster of the C loop passes just before and after it.
extension BenchReport {
    /// The `--no-history` runs (`e2e`) paired with passes 0...repeats, the default export's runs (history on) with
    /// passes repeats...2 repeats.
    var cLoopPairs: (noHistory: (cpu: [Double], wall: [Double]), defaultExport: (cpu: [Double], wall: [Double])) {
        let n = e2e.count
        let off = pairedOverCLoop(e2e.map { ($0.records, $0.wallSeconds, $0.cpuSeconds) }, Array(cLoops.prefix(n + 1)))
        let on = pairedOverCLoop(
            defaultExport.map { ($0.records, $0.wallSeconds, $0.cpuSeconds) }, Array(cLoops.dropFirst(n)))
        return (off, on)
    }

    /// The `ratios` entries against the C loop: medians and best paired run, CPU time and wall clock.
    var cLoopRatios: [String: Double] { Self.ratiosOverCLoop(cLoopPairs, corpus: "") }

    /// The ratio entries of one corpus's pairs, each key named with `corpus` (empty for the benchmark corpus).
    static func ratiosOverCLoop(
        _ p: (noHistory: (cpu: [Double], wall: [Double]), defaultExport: (cpu: [Double], wall: [Double])),
        corpus: String
    ) -> [String: Double] {
        [
            "\(corpus)no_history_over_c_loop": median(p.noHistory.cpu),
            "\(corpus)no_history_over_c_loop_wall": median(p.noHistory.wall),
            "best_paired_\(corpus)no_history_over_c_loop_cpu": p.noHistory.cpu.max() ?? 0,
            "\(corpus)default_export_over_c_loop": median(p.defaultExport.cpu),
            "\(corpus)default_export_over_c_loop_wall": median(p.defaultExport.wall),
            "best_paired_\(corpus)default_export_over_c_loop_cpu": p.defaultExport.cpu.max() ?? 0,
        ]
    }

    /// The `c_loop` and `default_export` sections of the JSON report.
    var cLoopJSON: [String: Any] {
        let fastest = cLoops.min { $0.cpuMicrosPerLine < $1.cpuMicrosPerLine }!
        let p = cLoopPairs
        let receipts: Int = defaultExport.first?.records ?? 0
        let peak: Double = defaultExport.map(\.peakRSSMB).max() ?? 0
        return [
            "c_loop": [
                "lines": fastest.lines, "decoded": fastest.decoded, "walked": fastest.walked,
                "signature_ok": fastest.signatureOK, "chain_ok": fastest.valid, "chain_checks": fastest.chainChecks,
                "cpu_us_per_record": fastest.cpuMicrosPerLine,
                "all_cpu_us_per_record": cLoops.map(\.cpuMicrosPerLine),
                "all_records_per_second": cLoops.map(\.linesPerSecond),
            ],
            "default_export": [
                "receipts": receipts,
                "all_cpu_us_per_receipt": defaultExport.map { $0.cpuSeconds * 1e6 / Double(max($0.records, 1)) },
                "all_receipts_per_second": defaultExport.map { Double($0.records) / $0.wallSeconds },
                "peak_rss_mb": peak,
                "paired_ratios_cpu": p.defaultExport.cpu, "paired_ratios_wall": p.defaultExport.wall,
            ],
            "no_history_paired_over_c_loop_cpu": p.noHistory.cpu,
        ]
    }

    func printCLoop() {
        let r = cLoopRatios
        let p = cLoopPairs
        let fastest = cLoops.min { $0.cpuMicrosPerLine < $1.cpuMicrosPerLine }!
        func runs(_ v: [Double]) -> String { v.map { String(format: "%.3f", $0) }.joined(separator: ", ") }
        print("")
        print(
            String(
                format:
                    "plain C loop (zstd, key scan, base64, DER walk, digests, RSA + cached chain through OpenSSL; no output): %.2f CPU µs/record (passes: %@)",
                fastest.cpuMicrosPerLine, runs(cLoops.map(\.cpuMicrosPerLine))))
        print(
            String(
                format: "  it saw %d lines, %d decoded, %d walked, %d signatures ok, %d chaining to the anchor",
                fastest.lines, fastest.decoded, fastest.walked, fastest.signatureOK, fastest.valid))
        print(
            String(
                format: "export / C loop by CPU time (median; best paired run; each run): --no-history %.3f; %.3f; %@",
                r["no_history_over_c_loop"]!, r["best_paired_no_history_over_c_loop_cpu"]!, runs(p.noHistory.cpu)))
        print(
            String(
                format: "                                     default export (history on) %.3f; %.3f; %@",
                r["default_export_over_c_loop"]!, r["best_paired_default_export_over_c_loop_cpu"]!,
                runs(p.defaultExport.cpu)))
        print(
            String(
                format: "  by wall clock (median): --no-history %.3f, default export %.3f",
                r["no_history_over_c_loop_wall"]!, r["default_export_over_c_loop_wall"]!))
    }
}
