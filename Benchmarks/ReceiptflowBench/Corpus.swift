import Foundation
import ReceiptSynth

/// The benchmark corpus: `receiptflow generate` output (zstd NDJSON) and the test root that verifies it,
/// regenerated deterministically when absent (same count, seed and bad fraction give the same bytes).
struct Corpus {
    var path: String
    var rootPEM: String
    var rootDER: [UInt8]
    var pki: TestPKI
    var count: Int
    var seed: UInt64
    var badFraction: Double
    var compressedBytes: Int
    var generatedSeconds: Double?

    /// Loads (or first generates) the corpus `bench-out/corpus-<count>-s<seed>-b<fraction>.ndjson.zst`.
    static func prepare(directory: String, count: Int, seed: UInt64, badFraction: Double, path explicit: String?)
        throws -> Corpus
    {
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let caDir = URL(fileURLWithPath: directory).appendingPathComponent("test-ca")
        let pki = try TestPKI.load(directory: caDir)
        let name = String(format: "corpus-%d-s%llu-b%.3f.ndjson.zst", count, seed, badFraction)
        let path = explicit ?? URL(fileURLWithPath: directory).appendingPathComponent(name).path
        var generated: Double? = nil
        if !fm.fileExists(atPath: path) {
            guard explicit == nil else { throw SynthError("corpus \(path) does not exist") }
            FileHandle.standardError.write(Data("generating \(count) receipts into \(path) ...\n".utf8))
            let factory = RecordFactory(pki: pki, seed: seed, digest: .mixed, badFraction: badFraction)
            let stats = try Generator.run(factory: factory, count: count, out: URL(fileURLWithPath: path))
            generated = stats.seconds
        }
        let size = (try fm.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        return Corpus(
            path: path, rootPEM: caDir.appendingPathComponent("root.pem").path, rootDER: pki.root.der, pki: pki,
            count: count, seed: seed, badFraction: badFraction, compressedBytes: size, generatedSeconds: generated)
    }
}
