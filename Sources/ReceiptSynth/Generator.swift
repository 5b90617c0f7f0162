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
        factory: RecordFactory, count: Int, out: URL, truth: URL? = nil, progress: ((Int) -> Void)? = nil
    ) throws(SynthError) -> Stats {
        let start = DispatchTime.now().uptimeNanoseconds
        let compressed = out.lastPathComponent.hasSuffix(".zst")
        let data = try OutputFile(url: out, compressed: compressed)
        let truthFile: OutputFile
        do { truthFile = try OutputFile(url: truth ?? truthURL(for: out), compressed: compressed) } catch {
            data.abort()
            throw error
        }
        var stats = Stats()
        var line = 0
        let batchSize = 2048
        let chunk = 16
        do {
            var first = 0
            while first < count {
                let n = min(batchSize, count - first)
                let base = first
                // Chunks of records per task keep scheduling overhead small next to the RSA signatures.
                let chunks = parallelMap((n + chunk - 1) / chunk) { c in
                    (c * chunk..<min((c + 1) * chunk, n)).map { factory.record(base + $0) }
                }
                var text: [UInt8] = []
                var truthText = ""
                for r in chunks.joined() {
                    if r.blankLineBefore {
                        text.append(0x0A)
                        line += 1
                    }
                    text += r.line
                    text.append(0x0A)
                    line += 1
                    truthText += "{\"line\":\(line),\(r.truthTail)\n"
                    stats.kinds[r.kind, default: 0] += 1
                }
                try data.write(text)
                try truthFile.write(truthText)
                first += n
                progress?(first)
            }
            try data.finish()
            try truthFile.finish()
        } catch {
            data.abort()
            truthFile.abort()
            throw error
        }
        stats.records = count
        stats.lines = line
        stats.uncompressedBytes = data.bytesIn
        stats.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return stats
    }
}
