import Foundation
import ReceiptPipeline
import ReceiptSink
import ReceiptVerify

/// End to end through the real `ExportPipeline`: zstd NDJSON in, Parquet out, verification on, all threads,
/// exactly what `receiptflow export` runs (minus argument parsing and summary.json). `copies` > 1 passes the corpus
/// that many times as the run's inputs, one after the other, as a longer migration reads many files.
struct EndToEndResult {
    var threads: Int
    var records: Int
    var transactions: Int
    var valid: Int
    var wallSeconds: Double
    var cpuSeconds: Double
    /// CPU time of the calling thread, which is the pipeline's writer (sink) thread.
    var writerCPUSeconds: Double
    var allocations: UInt64
    var peakRSSMB: Double
    var decompressedBytes: Int
    var compressedBytes: Int
    var outputBytes: Int
    var cacheHits: Int
    var cacheMisses: Int

    var receiptsPerSecond: Double { Double(records) / wallSeconds }
    var cpuMicrosPerReceipt: Double { cpuSeconds * 1e6 / Double(max(records, 1)) }
}

func runEndToEnd(
    _ corpus: Corpus, threads: Int, outDir: String, decompressedBytes: Int, copies: Int = 1
) throws -> EndToEndResult {
    let anchors = try TrustAnchors(certificates: [(source: "bench-test-root", bytes: corpus.rootDER)])
    let cache = ChainCache(anchors: anchors)
    var config = PipelineConfig()
    config.inputs = Array(repeating: corpus.path, count: copies)
    config.threads = threads
    config.verify = true
    try? FileManager.default.removeItem(atPath: outDir)
    let sink = try makeSink(format: .parquet, directory: outDir, metadata: RunMetadata())
    let pipeline = ExportPipeline(config: config, sink: sink, cache: cache)

    Measure.resetPeakRSS()
    let m0 = Measure.mallocs()
    let c0 = Measure.processCPU()
    let t0 = Measure.wall()
    let w0 = Measure.threadCPU()
    let outcome = pipeline.run()
    let writerCPU = Measure.threadCPU() - w0
    let wall = Measure.wall() - t0
    let cpu = Measure.processCPU() - c0
    let allocations = Measure.mallocs() - m0
    let peak = Measure.peakRSSMB()

    guard case .completed(let r) = outcome else {
        throw BenchError("the end-to-end run did not complete: \(outcome)")
    }
    var outBytes = 0
    for name in (try? FileManager.default.contentsOfDirectory(atPath: outDir)) ?? [] {
        let a = try? FileManager.default.attributesOfItem(atPath: outDir + "/" + name)
        outBytes += (a?[.size] as? NSNumber)?.intValue ?? 0
    }
    return EndToEndResult(
        threads: threads, records: r.counts.records, transactions: r.counts.transactions,
        valid: r.counts.count(of: .valid), wallSeconds: wall, cpuSeconds: cpu, writerCPUSeconds: writerCPU,
        allocations: allocations,
        peakRSSMB: peak, decompressedBytes: decompressedBytes * copies,
        compressedBytes: corpus.compressedBytes * copies,
        outputBytes: outBytes, cacheHits: r.chainCacheHits, cacheMisses: r.chainCacheMisses)
}

/// A benchmark failure with a message for people.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
