import CMallocCount
import Foundation
import ReceiptDER
import ReceiptModel

/// Parse-stage benchmark: µs per receipt and heap allocations per receipt for `ReceiptParser.parse` on a set of
/// DER receipts, after one warm-up pass (the parser's buffers reach their working size).
struct ParseBenchResult {
    var receipts: Int
    var microsPerReceipt: Double
    var allocationsPerReceipt: Double
    var failures: Int
}

func runParseBench(_ corpus: [[UInt8]], iterations: Int) -> ParseBenchResult {
    let parser = ReceiptParser()
    // Exactly sized copies the loop can read without touching Swift arrays (no retain/release noise).
    let buffers = corpus.map { bytes -> UnsafeRawBufferPointer in
        let b = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        b.copyBytes(from: bytes)
        return UnsafeRawBufferPointer(b)
    }
    defer { buffers.forEach { $0.deallocate() } }
    var failures = 0
    var sink = 0
    func pass() {
        for b in buffers {
            do throws(ReceiptError) {
                try parser.parse(b)
                sink &+= parser.fields.inAppCount &+ parser.container.certificates.count
            } catch {
                failures += 1
            }
        }
    }
    pass()  // warm-up
    failures = 0
    let mallocsBefore = rf_malloc_count()
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<iterations { pass() }
    let nanos = DispatchTime.now().uptimeNanoseconds - start
    let mallocs = rf_malloc_count() - mallocsBefore
    let n = iterations * buffers.count
    if sink == -1 { print(sink) }  // keeps the work observable
    return ParseBenchResult(
        receipts: n, microsPerReceipt: Double(nanos) / 1000 / Double(max(n, 1)),
        allocationsPerReceipt: Double(mallocs) / Double(max(n, 1)), failures: failures)
}

/// The real receipts in Tests/Fixtures/real, read from the package root (the working directory).
func loadFixtureCorpus() -> [[UInt8]] {
    let dir = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        .appendingPathComponent("Tests/Fixtures/real")
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
    return names.filter { $0.hasSuffix(".der") }.sorted().compactMap {
        (try? Data(contentsOf: dir.appendingPathComponent($0))).map { [UInt8]($0) }
    }
}
