import Dispatch
import Foundation

/// Writes `count` generated records as NDJSON (zstd-compressed when the name ends in `.zst`) plus the truth file,
/// in record order, using every core. The output is a pure function of the factory's seed and options.
public enum Generator {
    /// What a run produced.
    public struct Stats: Sendable {
        public var records = 0
        public var lines = 0
        public var uncompressedBytes = 0
        public var seconds = 0.0
        public var kinds: [RecordKind: Int] = [:]
        public var receiptsPerSecond: Double { seconds > 0 ? Double(records) / seconds : 0 }
    }

    /// The truth file for an output path: `.zst` and `.ndjson`/`.jsonl` are stripped, `.truth.ndjson` added, and
    /// `.zst` again when the output is compressed (`sample.ndjson.zst` -> `sample.truth.ndjson.zst`).
    public static func truthURL(for out: URL) -> URL {
        var name = out.lastPathComponent
        let compressed = name.hasSuffix(".zst")
        if compressed { name = String(name.dropLast(4)) }
        for ext in [".ndjson", ".jsonl"] where name.hasSuffix(ext) { name = String(name.dropLast(ext.count)) }
        return out.deletingLastPathComponent().appendingPathComponent(
            name + ".truth.ndjson" + (compressed ? ".zst" : ""))
    }

    /// Generates `count` records into `out` and its truth file.
    /// - Parameter progress: called on the writer side after each batch with the records written so far.
    public static func run(
        factory: RecordFactory, count: Int, out: URL, truth: URL? = nil, progress: (@Sendable (Int) -> Void)? = nil
    ) throws(SynthError) -> Stats {
        let start = DispatchTime.now().uptimeNanoseconds
        let compressed = out.lastPathComponent.hasSuffix(".zst")
        let data = try OutputFile(url: out, compressed: compressed)
        let truthFile: OutputFile
        do { truthFile = try OutputFile(url: truth ?? truthURL(for: out), compressed: compressed) } catch {
            data.abort()
            throw error
        }
        // Batches are made in parallel and written on a serial queue while the next batch is being made; a
        // semaphore bounds the batches in flight (memory).
        let writer = DispatchQueue(label: "receiptflow.generate.writer")
        let inFlight = DispatchSemaphore(value: 2)
        let state = WriterState()
        let batchSize = 2048
        let chunk = 16
        var first = 0
        while first < count, state.failure == nil {
            let n = min(batchSize, count - first)
            let base = first
            // Chunks of records per task keep scheduling overhead small next to the RSA signatures.
            let chunks = parallelMap((n + chunk - 1) / chunk) { c in
                (c * chunk..<min((c + 1) * chunk, n)).map { factory.record(base + $0) }
            }
            first += n
            let done = first
            inFlight.wait()
            writer.async {
                defer { inFlight.signal() }
                guard state.failure == nil else { return }
                do throws(SynthError) {
                    try state.write(chunks, data: data, truth: truthFile)
                    progress?(done)
                } catch { state.failure = error }
            }
        }
        writer.sync {}
        var stats = state.stats
        do throws(SynthError) {
            if let f = state.failure { throw f }
            try data.finish()
            try truthFile.finish()
        } catch {
            data.abort()
            truthFile.abort()
            throw error
        }
        stats.records = count
        stats.uncompressedBytes = data.bytesIn
        stats.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return stats
    }
}

/// The writer side of a run: line numbering and counts, touched only on the writer queue (and read after
/// `writer.sync`); the first failure, which the producer also reads, behind a lock.
private final class WriterState: @unchecked Sendable {
    var stats = Generator.Stats()
    private let lock = NSLock()
    private var _failure: SynthError? = nil
    var failure: SynthError? {
        get { lock.withLock { _failure } }
        set { lock.withLock { _failure = newValue } }
    }

    func write(_ chunks: [[GeneratedRecord]], data: OutputFile, truth: OutputFile) throws(SynthError) {
        var text: [UInt8] = []
        var truthText = ""
        for r in chunks.joined() {
            if r.blankLineBefore {
                text.append(0x0A)
                stats.lines += 1
            }
            text += r.line
            text.append(0x0A)
            stats.lines += 1
            truthText += "{\"line\":\(stats.lines),\(r.truthTail)\n"
            stats.kinds[r.kind, default: 0] += 1
        }
        try data.write(text)
        try truth.write(truthText)
    }
}
