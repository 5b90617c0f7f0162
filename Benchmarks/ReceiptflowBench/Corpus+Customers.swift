import Foundation
import ReceiptSynth

/// The customer-history corpus: `receiptflow generate --customers N --years Y --seed S` (signed, without the
/// expected tables), where each account's receipts repeat its earlier purchases, as real archives do. Made once in
/// the benchmark folder with the same test CA as the other corpora, so the same root verifies it.
struct CustomerCorpus {
    var corpus: Corpus
    var customers: Int
    var years: Int

    /// Loads (or first generates) `bench-out/customers-<N>-y<Y>-s<seed>.ndjson.zst`, or the file at `path`
    /// (then made with the same test CA; `customers` only names it in the report).
    static func prepare(directory: String, customers: Int, years: Int, seed: UInt64, path explicit: String?)
        throws -> CustomerCorpus
    {
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let caDir = URL(fileURLWithPath: directory).appendingPathComponent("test-ca")
        let pki = try TestPKI.load(directory: caDir)
        let name = "customers-\(customers)-y\(years)-s\(seed).ndjson.zst"
        let path = explicit ?? URL(fileURLWithPath: directory).appendingPathComponent(name).path
        var generated: Double? = nil
        if !fm.fileExists(atPath: path) {
            guard explicit == nil else { throw SynthError("corpus \(path) does not exist") }
            FileHandle.standardError.write(
                Data("generating the receipts of \(customers) customers over \(years) years into \(path) ...\n".utf8))
            let options = CustomerGenerator.Options(
                customers: customers, years: years, seed: seed, source: path, expected: false)
            let stats = try CustomerGenerator.run(pki: pki, options: options, out: URL(fileURLWithPath: path))
            generated = stats.seconds
        }
        let size = (try fm.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        // `count` holds the customers; the simulation makes its own bad receipts, so no bad fraction applies.
        let corpus = Corpus(
            path: path, rootPEM: caDir.appendingPathComponent("root.pem").path, rootDER: pki.root.der, pki: pki,
            count: customers, seed: seed, badFraction: 0, compressedBytes: size, generatedSeconds: generated)
        return CustomerCorpus(corpus: corpus, customers: customers, years: years)
    }
}
