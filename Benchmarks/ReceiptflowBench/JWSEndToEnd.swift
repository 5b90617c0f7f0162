import COpenSSL
import Foundation
import ReceiptJWS
import ReceiptPipeline
import ReceiptSink
import ReceiptVerify

/// The ES256 ceiling: OpenSSL's check of a P-256 signature over SHA-256 of a JWS's `header.payload`
/// (`EVP_DigestVerifyInit` + `EVP_DigestVerify`, the leaf key already decoded), on the pipeline's threads, over
/// signing inputs of the corpus. Every valid JWS needs one, so no verifier exports JWS faster than this.
final class ES256Ceiling: @unchecked Sendable {
    let key: OpaquePointer
    let md: OpaquePointer
    /// Signing inputs and their DER signatures, genuine JWS of the corpus.
    let inputs: [[UInt8]]
    let signatures: [[UInt8]]

    /// Takes up to 256 JWS of `corpus` that the genuine leaf signed.
    init(corpus: JWSCorpus) throws {
        let all = try String(contentsOfFile: corpus.listPath, encoding: .utf8).split(separator: "\n")
        var parsed: [(input: [UInt8], signature: [UInt8], leaf: [UInt8])] = []
        for text in all.prefix(2048) {
            let bytes = Array(text.utf8)
            guard
                let jws = try? bytes.withUnsafeBytes({ b throws(JWSError) in try CompactJWS.parse(b) }),
                jws.header.alg == "ES256", jws.signature.count == 64, jws.header.chain.der.count == 3
            else { continue }
            parsed.append(
                (Array(bytes[0..<jws.signingInputCount]), derSignature(jws.signature), jws.header.chain.der[0]))
        }
        guard let leafDER = parsed.first?.leaf,
            let x509 = leafDER.withUnsafeBufferPointer({ b -> OpaquePointer? in
                var p: UnsafePointer<UInt8>? = b.baseAddress
                return d2i_X509(nil, &p, b.count)
            })
        else { throw BenchError("the JWS corpus holds no ES256 JWS to measure the ceiling with") }
        defer { X509_free(x509) }
        guard let key = X509_get_pubkey(x509), let md = EVP_MD_fetch(nil, "SHA256", nil) else {
            throw BenchError("cannot decode the corpus leaf's key")
        }
        self.key = key
        self.md = md
        var inputs: [[UInt8]] = []
        var signatures: [[UInt8]] = []
        for p in parsed where inputs.count < 256 && Self.verify(key, md, p.input, p.signature) {
            inputs.append(p.input)
            signatures.append(p.signature)
        }
        guard !inputs.isEmpty else { throw BenchError("no corpus JWS verifies under the corpus leaf") }
        self.inputs = inputs
        self.signatures = signatures
    }

    deinit {
        EVP_PKEY_free(key)
        EVP_MD_free(md)
    }

    static func verify(_ key: OpaquePointer, _ md: OpaquePointer, _ input: [UInt8], _ sig: [UInt8]) -> Bool {
        let ctx = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, md, nil, key) == 1 else { return false }
        return EVP_DigestVerify(ctx, sig, sig.count, input, input.count) == 1
    }

    /// One sample on `threads` threads for `seconds`: verifications per wall second, CPU µs of one with every
    /// thread busy.
    func sample(threads: Int, seconds: Double) -> (perSecond: Double, busyCPUMicros: Double, failures: Int) {
        let r = timed(threads: threads, seconds: seconds) { [self] i in
            let k = i % inputs.count
            return Self.verify(key, md, inputs[k], signatures[k])
        }
        return (r.perSecond, r.cpuMicrosPerOp, r.failures)
    }
}

/// One export of the JWS corpus through the real `ExportPipeline`: zstd NDJSON in, Parquet out, verification on.
struct JWSEndToEndResult {
    var jws: Int
    var valid: Int
    var transactions: Int
    var wallSeconds: Double
    var cpuSeconds: Double
    var allocations: UInt64
    var peakRSSMB: Double
    /// The faster ceiling sample of the two around this run, and its busy CPU µs per verification.
    var ceilingPerSecond = 0.0
    var ceilingCPUMicros = 0.0

    /// Valid JWS (each passed one ES256 check) per wall second.
    var verifiedPerSecond: Double { Double(valid) / wallSeconds }
    /// Process CPU µs per valid JWS: every thread's time, the reader's and the writer's included.
    var cpuMicrosPerVerified: Double { cpuSeconds * 1e6 / Double(max(valid, 1)) }
    var ratioWall: Double { verifiedPerSecond / ceilingPerSecond }
    var ratioCPU: Double { ceilingCPUMicros / cpuMicrosPerVerified }
}

func runJWSEndToEnd(_ corpus: JWSCorpus, threads: Int, outDir: String) throws -> JWSEndToEndResult {
    let anchors = try TrustAnchors(certificates: [(source: "bench-jws-root", bytes: corpus.rootDER)])
    var config = PipelineConfig()
    config.inputs = [corpus.path]
    config.threads = threads
    config.verify = true
    try? FileManager.default.removeItem(atPath: outDir)
    let sink = try makeSink(format: .parquet, directory: outDir, metadata: RunMetadata())
    let pipeline = ExportPipeline(config: config, sink: sink, cache: ChainCache(anchors: anchors))

    Measure.resetPeakRSS()
    let m0 = Measure.mallocs()
    let c0 = Measure.processCPU()
    let t0 = Measure.wall()
    let outcome = pipeline.run()
    let wall = Measure.wall() - t0
    let cpu = Measure.processCPU() - c0
    let allocations = Measure.mallocs() - m0
    guard case .completed(let r) = outcome else { throw BenchError("the JWS export did not complete: \(outcome)") }
    // Nothing lost: every JWS of the corpus has its receipts row.
    guard r.counts.records == corpus.jws else {
        throw BenchError("the JWS export wrote \(r.counts.records) receipts rows for \(corpus.jws) JWS")
    }
    return JWSEndToEndResult(
        jws: r.counts.records, valid: r.counts.count(of: .valid), transactions: r.counts.transactions,
        wallSeconds: wall, cpuSeconds: cpu, allocations: allocations, peakRSSMB: Measure.peakRSSMB())
}
