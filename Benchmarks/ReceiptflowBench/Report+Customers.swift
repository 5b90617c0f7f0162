import Foundation

/// The export against the plain C loop on the customer-history corpus (CustomerBench.swift), paired as on the
/// benchmark corpus: each export run against the faster of the C loop passes just before and after it.
extension BenchReport {
    /// The `--no-history` runs paired with passes 0...repeats, the default export's with passes repeats...2 repeats;
    /// nil when the run had no customer-history corpus.
    var customerPairs: (noHistory: (cpu: [Double], wall: [Double]), defaultExport: (cpu: [Double], wall: [Double]))? {
        guard let c = customers else { return nil }
        let n = c.noHistory.count
        let off = pairedOverCLoop(
            c.noHistory.map { ($0.records, $0.wallSeconds, $0.cpuSeconds) }, Array(c.cLoops.prefix(n + 1)))
        let on = pairedOverCLoop(
            c.defaultExport.map { ($0.records, $0.wallSeconds, $0.cpuSeconds) }, Array(c.cLoops.dropFirst(n)))
        return (off, on)
    }

    /// The `ratios` entries on the customer-history corpus: medians and best paired run, CPU time and wall clock.
    var customerRatios: [String: Double] {
        guard let p = customerPairs else { return [:] }
        return Self.ratiosOverCLoop(p, corpus: "customers_")
    }

    /// The `customers` section of the JSON report (empty without a customer-history corpus).
    var customerJSON: [String: Any] {
        guard let c = customers, let p = customerPairs else { return [:] }
        let fastest = c.cLoops.min { $0.cpuMicrosPerLine < $1.cpuMicrosPerLine }!
        func cpuPerReceipt(_ records: Int, _ cpu: Double) -> Double { cpu * 1e6 / Double(max(records, 1)) }
        var corpus: [String: Any] = [
            "path": c.corpus.corpus.path, "customers": c.corpus.customers, "years": c.corpus.years,
            "seed": c.corpus.corpus.seed,
            "compressed_bytes": c.corpus.corpus.compressedBytes, "receipts": c.noHistory[0].records,
            "valid": c.noHistory[0].valid, "transactions": c.noHistory[0].transactions,
            "purchases": c.defaultExport[0].purchases,
        ]
        if let s = c.corpus.corpus.generatedSeconds { corpus["generated_seconds"] = s }
        let offPeak: Double = c.noHistory.map(\.peakRSSMB).max() ?? 0
        let onPeak: Double = c.defaultExport.map(\.peakRSSMB).max() ?? 0
        return [
            "customers": [
                "corpus": corpus,
                "c_loop": [
                    "lines": fastest.lines, "signature_ok": fastest.signatureOK, "chain_ok": fastest.valid,
                    "cpu_us_per_record": fastest.cpuMicrosPerLine,
                    "all_cpu_us_per_record": c.cLoops.map(\.cpuMicrosPerLine),
                    "all_records_per_second": c.cLoops.map(\.linesPerSecond),
                ],
                "no_history": [
                    "all_cpu_us_per_receipt": c.noHistory.map { cpuPerReceipt($0.records, $0.cpuSeconds) },
                    "all_receipts_per_second": c.noHistory.map(\.receiptsPerSecond),
                    "peak_rss_mb": offPeak,
                    "paired_ratios_cpu": p.noHistory.cpu, "paired_ratios_wall": p.noHistory.wall,
                ],
                "default_export": [
                    "all_cpu_us_per_receipt": c.defaultExport.map { cpuPerReceipt($0.records, $0.cpuSeconds) },
                    "all_receipts_per_second": c.defaultExport.map { Double($0.records) / $0.wallSeconds },
                    "peak_rss_mb": onPeak,
                    "paired_ratios_cpu": p.defaultExport.cpu, "paired_ratios_wall": p.defaultExport.wall,
                ],
            ]
        ]
    }

    func printCustomers() {
        guard let c = customers, let p = customerPairs else { return }
        let r = customerRatios
        let fastest = c.cLoops.min { $0.cpuMicrosPerLine < $1.cpuMicrosPerLine }!
        func runs(_ v: [Double]) -> String { v.map { String(format: "%.3f", $0) }.joined(separator: ", ") }
        print("")
        print(
            String(
                format:
                    "customer-history corpus (%d customers over %d years: %d receipts repeating their account's purchases, %d distinct purchases, %.1f MB zstd)",
                c.corpus.customers, c.corpus.years, c.noHistory[0].records, c.defaultExport[0].purchases,
                Double(c.corpus.corpus.compressedBytes) / 1e6))
        print(
            String(
                format: "  plain C loop: %.2f CPU µs/record (passes: %@); %d signatures ok, %d chaining to the anchor",
                fastest.cpuMicrosPerLine, runs(c.cLoops.map(\.cpuMicrosPerLine)), fastest.signatureOK, fastest.valid))
        print(
            String(
                format:
                    "  export / C loop by CPU time (median; best paired run; each run): --no-history %.3f; %.3f; %@",
                r["customers_no_history_over_c_loop"]!, r["best_paired_customers_no_history_over_c_loop_cpu"]!,
                runs(p.noHistory.cpu)))
        print(
            String(
                format: "                                       default export (history on) %.3f; %.3f; %@",
                r["customers_default_export_over_c_loop"]!, r["best_paired_customers_default_export_over_c_loop_cpu"]!,
                runs(p.defaultExport.cpu)))
        print(
            String(
                format: "  by wall clock (median): --no-history %.3f, default export %.3f",
                r["customers_no_history_over_c_loop_wall"]!, r["customers_default_export_over_c_loop_wall"]!))
    }
}
