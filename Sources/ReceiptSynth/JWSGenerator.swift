import Dispatch
import Foundation

/// `receiptflow generate --jws`: writes `count` lines of JWS data (``JWSRecordFactory``) as NDJSON, zstd-compressed
/// when the name ends in `.zst`, and the truth file beside it, one line per JWS. The truth and every JWS's header and
/// payload are a function of the seed, the options and the test PKI; the ES256 signatures are OpenSSL's, randomized
/// (``ECKey/signJWS(_:)``), so the JWS text differs from run to run.
public enum JWSGenerator {
    /// What a run produced.
    public struct Stats: Sendable {
        public var lines = 0
        /// `receipts` rows the export must write: one per JWS, one per empty page.
        public var rows = 0
        public var kinds: [String: Int] = [:]
        public var seconds = 0.0
    }

    /// Generates `count` lines into `out` and the truth into `truth` (default ``Generator/truthURL(for:)``).
    public static func run(factory: JWSRecordFactory, count: Int, out: URL, truth: URL? = nil) throws(SynthError)
        -> Stats
    {
        let started = DispatchTime.now().uptimeNanoseconds
        let compressed = out.lastPathComponent.hasSuffix(".zst")
        let data = try OutputFile(url: out, compressed: compressed)
        let truthFile: OutputFile
        do { truthFile = try OutputFile(url: truth ?? Generator.truthURL(for: out), compressed: compressed) } catch {
            data.abort()
            throw error
        }
        var stats = Stats()
        do throws(SynthError) {
            let batch = 512
            var first = 0
            while first < count {
                let n = min(batch, count - first)
                let base = first
                let records = parallelMap(n) { factory.record(base + $0) }
                first += n
                var text: [UInt8] = []
                var truthText = ""
                for r in records {
                    stats.lines += 1
                    text += r.line
                    text.append(0x0A)
                    for (tail, kind) in zip(r.truthTails, r.kinds) {
                        truthText += "{\"line\":\(stats.lines),\(tail)\n"
                        stats.rows += 1
                        stats.kinds[kind?.rawValue ?? "empty-body", default: 0] += 1
                    }
                }
                try data.write(text)
                try truthFile.write(truthText)
            }
            try data.finish()
            try truthFile.finish()
        } catch {
            data.abort()
            truthFile.abort()
            throw error
        }
        stats.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return stats
    }
}
