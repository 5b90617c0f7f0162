import CMallocCount
import Foundation
import ReceiptSink

// receiptflow-bench [MODE]: `run` (the default: stages, end to end and the RSA ceiling over a generated corpus,
// see RunCommand.swift), `parse` (DER parse stage on the real fixtures), `verify` (warm-cache verify vs raw RSA),
// `sinks` (writer cost per row), `history` (the purchase history's cost, memory and spill; HistoryBench.swift),
// `jws` (the JWS export against OpenSSL's ES256 check; JWSCommand.swift), `repeats` (repeated receipts against
// distinct ones; RepeatsBench.swift).
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
case "repeats":
    exit(runRepeatsBenchmark(Array(CommandLine.arguments.dropFirst(2))))
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
    if only == .ndjson {
        // NDJSON lines are rendered by the workers, not the sink: its cost is the export's (`run`), not a writer's.
        print("sinks: BENCH_FORMAT takes parquet or csv (NDJSON rows are rendered by the workers, not the sink)")
        exit(2)
    }
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
    // The JWS export end to end, and the verifier alone, against OpenSSL's ES256 check (JWSCommand.swift).
    exit(runJWSBenchmark(Array(CommandLine.arguments.dropFirst(2))))
default:
    print("receiptflow-bench: unknown mode \(mode)")
    exit(2)
}
