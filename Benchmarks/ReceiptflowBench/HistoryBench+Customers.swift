import Foundation

/// The history's cost on a customer-history corpus, where each account's receipts repeat its earlier purchases as
/// in real archives: `--no-history`, the default export, and the default export with a 4 MiB history budget (every
/// occurrence through the spill), run in that order `repeats` times.
///
/// Each ratio is a throughput by CPU time over the `--no-history` run of the same round, and the report takes the
/// median round's, so a round that the machine's load slowed on one side only does not set the figure.
func runHistoryCustomers(_ customers: CustomerCorpus, threads: Int, outDir: String, repeats: Int) throws -> [String:
    Any]
{
    var on: [Double] = []
    var spilled: [Double] = []
    var offCPU: [Double] = []
    var spill: HistoryRun? = nil
    var purchases: Int64 = 0
    var records = 0
    for _ in 0..<max(repeats, 1) {
        let off = try runHistoryEndToEnd(customers.corpus, threads: threads, outDir: outDir, copies: 1, history: false)
        let inMemory = try runHistoryEndToEnd(
            customers.corpus, threads: threads, outDir: outDir, copies: 1, history: true)
        let allSpilled = try runHistoryEndToEnd(
            customers.corpus, threads: threads, outDir: outDir, copies: 1, history: true, budget: 4 << 20)
        offCPU.append(off.cpuSeconds)
        on.append(off.cpuSeconds / inMemory.cpuSeconds)
        spilled.append(off.cpuSeconds / allSpilled.cpuSeconds)
        spill = allSpilled
        purchases = inMemory.purchases
        records = inMemory.records
    }
    try? FileManager.default.removeItem(atPath: outDir)
    return [
        "customers_records": records,
        "customers_purchases": purchases,
        "customers_cpu_seconds_off": offCPU.min() ?? 0,
        "customers_on_throughput_over_off_cpu": BenchReport.median(on),
        "customers_on_throughput_over_off_cpu_runs": on,
        "customers_all_spilled_throughput_over_off_cpu": BenchReport.median(spilled),
        "customers_all_spilled_throughput_over_off_cpu_runs": spilled,
        "customers_spill_bytes_per_purchase_record_all_spilled": Double(spill?.spilledPurchaseBytes ?? 0)
            / Double(max(spill?.spilledPurchaseRecords ?? 0, 1)),
        "customers_spilled_purchase_records_per_purchase": Double(spill?.spilledPurchaseRecords ?? 0)
            / Double(max(purchases, 1)),
    ]
}
