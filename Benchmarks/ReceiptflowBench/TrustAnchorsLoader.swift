import ReceiptVerify

/// The corpus's test root as the pipeline's trust anchor.
enum TrustAnchorsLoader {
    static func load(_ corpus: Corpus) throws -> TrustAnchors {
        do { return try TrustAnchors(certificates: [(source: "bench-test-root", bytes: corpus.rootDER)]) } catch {
            throw BenchError("the corpus root is not usable as a trust anchor: \(error.message)")
        }
    }
}
