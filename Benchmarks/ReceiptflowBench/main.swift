import CMallocCount
import Foundation
import ReceiptSink

// receiptflow-bench [MODE]: `run` (the default: stages, end to end and the RSA ceiling over a generated corpus,
// see RunCommand.swift), `parse` (DER parse stage on the real fixtures), `verify` (warm-cache verify vs raw RSA),
// `sinks` (writer cost per row), `history` (the purchase history's cost, memory and spill; HistoryBench.swift).
let first = CommandLine.arguments.dropFirst().first
let mode = first.map { $0.hasPrefix("-") ? "run" : $0 } ?? "run"

// The malloc shim must see Swift's allocations, or every "0 allocations" below would be meaningless.
@inline(never) func allocateProbe() -> [Int] { Array(repeating: 7, count: 1000) }
let probeBefore = rf_malloc_count()
let probe = allocateProbe()
guard rf_malloc_count() > probeBefore, probe.count == 1000 else {
    print("receiptflow-bench: the malloc-counting shim does not see allocations; refusing to report counts")
    exit(3)
}
switch mode {
case "run":
    let args = Array(CommandLine.arguments.dropFirst(first == "run" ? 2 : 1))
    exit(runBenchmark(args))
case "history":
    exit(runHistoryBenchmark(Array(CommandLine.arguments.dropFirst(2))))
case "parse":
    let corpus = loadFixtureCorpus()
    guard !corpus.isEmpty else {
        print("parse: no fixtures found (Tests/Fixtures/real); run from the package root")
        exit(1)
    }
    let iterations = Int(ProcessInfo.processInfo.environment["BENCH_ITERATIONS"] ?? "") ?? 2000
    let r = runParseBench(corpus, iterations: iterations)
    print(
        String(
            format: "parse: %d receipts, %.2f µs/receipt, %.4f heap allocations/receipt, %d failures",
            r.receipts, r.microsPerReceipt, r.allocationsPerReceipt, r.failures))
case "verify":
    let iterations = Int(ProcessInfo.processInfo.environment["BENCH_ITERATIONS"] ?? "") ?? 5000
    let r = runVerifyBench(iterations: iterations)
    guard !r.isEmpty else { exit(1) }
    for key in r.keys.sorted() { print(String(format: "verify: %@ = %.4f", key, r[key]!)) }
case "sinks":
    // Writer cost per row, counted after warm-up: allocations include finish() (footer, final row group).
    let batches = Int(ProcessInfo.processInfo.environment["BENCH_ITERATIONS"] ?? "") ?? 100
    let only = ProcessInfo.processInfo.environment["BENCH_FORMAT"].flatMap(OutputFormat.init(rawValue:))
    for format in only.map({ [$0] }) ?? [OutputFormat.parquet, .csv] {
        guard let r = runSinkBench(format: format, batches: batches) else { exit(1) }
        let rows = Double(r.receiptRows + r.transactionRows)
        print(
            String(
                format: "sinks %@: %d receipt + %d transaction rows, %.4f allocations/transaction row, %.3f µs/row, %@",
                r.format.rawValue, r.receiptRows, r.transactionRows,
                Double(r.allocations) / Double(max(1, r.transactionRows)), r.seconds * 1e6 / rows,
                r.bytes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value) B" }.joined(separator: ", ")))
    }
case "jws":
    // JWS verification against OpenSSL's ES256 check alone, on all cores (BENCH_THREADS to change).
    let env = ProcessInfo.processInfo.environment
    let threads = Int(env["BENCH_THREADS"] ?? "") ?? ProcessInfo.processInfo.activeProcessorCount
    let seconds = Double(env["BENCH_SECONDS"] ?? "") ?? 2
    do {
        if let i = CommandLine.arguments.firstIndex(of: "--write"), i + 1 < CommandLine.arguments.count {
            let n = Int(env["BENCH_ITERATIONS"] ?? "") ?? 2000
            try writeJWSCorpus(count: n, directory: CommandLine.arguments[i + 1])
            print("jws: wrote \(n) signed transactions and their root to \(CommandLine.arguments[i + 1])")
            exit(0)
        }
        let r = try runJWSBench(count: Int(env["BENCH_ITERATIONS"] ?? "") ?? 2000, threads: threads, seconds: seconds)
        print(
            String(
                format:
                    "jws: %d threads, ceiling (EVP_DigestVerify ES256) %.0f/s %.1f CPU µs, evaluator %.0f/s %.1f CPU µs: "
                    + "%.3f of the ceiling by wall clock, %.3f by CPU time; %d failures",
                r.threads, r.ceilingPerSecond, r.ceilingCPUMicros, r.evaluatorPerSecond, r.evaluatorCPUMicros,
                r.ratioWall, r.ratioCPU, r.failures))
        if r.failures > 0 { exit(1) }
    } catch {
        print("jws: \(error)")
        exit(1)
    }
default:
    print("receiptflow-bench: unknown mode \(mode)")
    exit(2)
}
