import COpenSSL
import Foundation
import ReceiptDER
import ReceiptSynth
import ReceiptVerify

/// The ceiling: RSA-2048 signature verifications per second through OpenSSL with the corpus leaf's key, on the
/// same number of threads as the pipeline, measured two ways:
/// - `EVP_PKEY_verify` of a PKCS #1 v1.5 signature over a precomputed SHA-256 digest, one `EVP_PKEY_CTX` per
///   thread: an RSA-2048 verification through OpenSSL, what `openssl speed rsa2048` reports as verify/s. This is
///   the ceiling docs/performance.md defines ("RSA-2048 verifications per second through OpenSSL");
/// - the bare public-key operation s^e mod n, `BN_mod_exp_mont` with kept contexts: the RSA work inside
///   `EVP_PKEY_verify` without the EVP layer, the padding check and OpenSSL's allocations.
///   The benchmark reports the ratio to it as well, as the stricter reading.
/// Beside them, the verifier's RSA check on one thread: `EVP_PKEY_verify` with a kept context, as `PKCS1Verifier`
/// calls it per receipt, which the floors use.
struct CeilingResult {
    var threads: Int
    /// `EVP_PKEY_verify` per second on all threads, wall clock.
    var perSecond: Double
    /// CPU µs of one `EVP_PKEY_verify` with every thread busy.
    var busyCPUMicros: Double
    /// Single-thread CPU time of one verification, µs (thread CPU clock: not inflated by other processes).
    var cpuMicrosPerVerify: Double
    /// Heap allocations OpenSSL makes inside one `EVP_PKEY_verify`.
    var allocationsPerVerify: Double
    /// `BN_mod_exp_mont` (kept `BN_CTX` and `BN_MONT_CTX`): single-thread CPU µs and heap allocations per call.
    var modExpCPUMicros: Double
    var modExpAllocations: Double
    /// `BN_mod_exp_mont` on all threads: per second (wall clock) and CPU µs per call with every thread busy (the
    /// threads share caches and, on a VM, perhaps physical cores, so this is above the single-thread cost).
    var modExpPerSecond: Double
    var modExpBusyCPUMicros: Double
    /// The verifier's RSA check (`EVP_PKEY_verify`, kept context): single-thread CPU µs and heap allocations per call.
    var verifierOpCPUMicros: Double
    var verifierOpAllocations: Double
    var keyBits: Int
}

/// One thread's verify context: its own `EVP_PKEY_CTX` (OpenSSL forbids sharing one) over the shared key.
final class RSAVerifyLoop: @unchecked Sendable {
    private let ctx: OpaquePointer
    private let signature: [UInt8]
    private let digest: [UInt8]

    init(key: OpaquePointer, signature: [UInt8], digest: [UInt8], md: OpaquePointer) {
        ctx = EVP_PKEY_CTX_new_from_pkey(nil, key, nil)!
        precondition(EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, md) == 1)
        self.signature = signature
        self.digest = digest
    }

    deinit { EVP_PKEY_CTX_free(ctx) }

    /// Runs `n` verifications; returns how many succeeded.
    func run(_ n: Int) -> Int {
        var ok = 0
        signature.withUnsafeBufferPointer { s in
            digest.withUnsafeBufferPointer { d in
                for _ in 0..<n where EVP_PKEY_verify(ctx, s.baseAddress, s.count, d.baseAddress, d.count) == 1 {
                    ok += 1
                }
            }
        }
        return ok
    }
}

/// s^e mod n for the ceiling key through OpenSSL's BN API, every context kept (one per thread).
final class ModExpLoop: @unchecked Sendable {
    private let n: OpaquePointer
    private let e: OpaquePointer
    private let s: OpaquePointer
    private let m: OpaquePointer
    private let mont: OpaquePointer
    private let ctx: OpaquePointer

    init(key: OpaquePointer, signature: [UInt8]) {
        var n: OpaquePointer? = nil
        var e: OpaquePointer? = nil
        // "n" and "e" are OSSL_PKEY_PARAM_RSA_N and _E; the ceiling key is RSA.
        precondition(EVP_PKEY_get_bn_param(key, "n", &n) == 1 && EVP_PKEY_get_bn_param(key, "e", &e) == 1)
        self.n = n!
        self.e = e!
        ctx = BN_CTX_new()!
        mont = BN_MONT_CTX_new()!
        precondition(BN_MONT_CTX_set(mont, self.n, ctx) == 1)
        s = BN_bin2bn(signature, Int32(signature.count), nil)!
        m = BN_new()!
    }

    deinit {
        [n, e, s, m].forEach { BN_free($0) }
        BN_MONT_CTX_free(mont)
        BN_CTX_free(ctx)
    }

    /// Runs `count` exponentiations; returns how many succeeded.
    func run(_ count: Int) -> Int {
        var ok = 0
        for _ in 0..<count where BN_mod_exp_mont(m, s, e, n, ctx, mont) == 1 { ok += 1 }
        return ok
    }
}

/// A signed digest under the corpus leaf's key, and that key as an `EVP_PKEY`.
final class CeilingFixture: @unchecked Sendable {
    let key: OpaquePointer
    let md: OpaquePointer
    let signature: [UInt8]
    let digest: [UInt8]
    let bits: Int

    init(pki: TestPKI) throws {
        let identity = pki.identity(.valid)
        var payload = PayloadBuilder()
        payload.utf8(2, "com.example.receiptflow.ceiling")
        payload.date(12, 1_590_969_600_000)
        let der = ReceiptSigner.sign(payload: payload.encode(), identity: identity, options: .init(digest: .sha256))
        let parser = ReceiptParser()
        try der.withUnsafeBytes { b in try parser.parse(b) }
        signature = Array(der[parser.container.signature])
        let content = der.withUnsafeBytes { b in parser.withContent(b) { [UInt8]($0) } }
        md = EVP_MD_fetch(nil, "SHA256", nil)!
        var d = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        precondition(EVP_Digest(content, content.count, &d, &len, md, nil) == 1)
        digest = d
        let x509 = identity.leaf.der.withUnsafeBufferPointer { b -> OpaquePointer in
            var p = b.baseAddress
            return d2i_X509(nil, &p, b.count)!
        }
        key = X509_get_pubkey(x509)!
        X509_free(x509)
        bits = Int(EVP_PKEY_get_bits(key))
    }

    deinit {
        EVP_PKEY_free(key)
        EVP_MD_free(md)
    }
}

/// Measures the ceiling for `seconds` of wall time on `threads` threads, each way, plus the single-thread CPU cost
/// and allocations of one call of each.
func runCeiling(_ f: CeilingFixture, threads: Int, seconds: Double) -> CeilingResult {
    let loops = (0..<threads).map { _ in RSAVerifyLoop(key: f.key, signature: f.signature, digest: f.digest, md: f.md) }
    precondition(loops[0].run(1) == 1, "the ceiling signature does not verify")
    let modExps = (0..<threads).map { _ in ModExpLoop(key: f.key, signature: f.signature) }
    // Warm-up: the BN_CTX pools grow on the first calls.
    for m in modExps { precondition(m.run(20) == 20) }

    // Single thread: CPU time and allocations per call.
    let n1 = 2000
    let m0 = Measure.mallocs()
    let c0 = Measure.threadCPU()
    _ = loops[0].run(n1)
    let cpu = (Measure.threadCPU() - c0) / Double(n1)
    let allocs = Double(Measure.mallocs() - m0) / Double(n1)
    let m1 = Measure.mallocs()
    let c1 = Measure.threadCPU()
    precondition(modExps[0].run(n1) == n1)
    let modExpCPU = (Measure.threadCPU() - c1) / Double(n1)
    let modExpAllocs = Double(Measure.mallocs() - m1) / Double(n1)
    let verifierOp = RSAVerifyLoop(key: f.key, signature: f.signature, digest: f.digest, md: f.md)
    precondition(verifierOp.run(20) == 20)
    let m2 = Measure.mallocs()
    let c2 = Measure.threadCPU()
    precondition(verifierOp.run(n1) == n1)
    let verifierOpCPU = (Measure.threadCPU() - c2) / Double(n1)
    let verifierOpAllocs = Double(Measure.mallocs() - m2) / Double(n1)

    let sample = sampleCeiling(f, threads: threads, seconds: seconds)
    return CeilingResult(
        threads: threads, perSecond: sample.evpPerSecond, busyCPUMicros: sample.evpBusyCPUMicros,
        cpuMicrosPerVerify: cpu * 1e6, allocationsPerVerify: allocs, modExpCPUMicros: modExpCPU * 1e6,
        modExpAllocations: modExpAllocs, modExpPerSecond: sample.perSecond, modExpBusyCPUMicros: sample.busyCPUMicros,
        verifierOpCPUMicros: verifierOpCPU * 1e6, verifierOpAllocations: verifierOpAllocs, keyBits: f.bits)
}

/// One sample of both ceilings (`EVP_PKEY_verify` and `BN_mod_exp_mont` on all threads), taken between end-to-end
/// runs so that each run can be compared with the ceilings measured right before and right after it.
struct CeilingSample {
    /// `EVP_PKEY_verify` per second (wall clock) and CPU µs of one with every thread busy.
    var evpPerSecond: Double
    var evpBusyCPUMicros: Double
    /// The bare operation, likewise.
    var perSecond: Double
    var busyCPUMicros: Double
}

extension CeilingSample {
    /// The sample a full ceiling measurement (before or after the runs) took.
    init(_ r: CeilingResult) {
        self.init(
            evpPerSecond: r.perSecond, evpBusyCPUMicros: r.busyCPUMicros, perSecond: r.modExpPerSecond,
            busyCPUMicros: r.modExpBusyCPUMicros)
    }
}

/// Both ceilings alone, `seconds` of wall time each on `threads` threads.
func sampleCeiling(_ f: CeilingFixture, threads: Int, seconds: Double) -> CeilingSample {
    let loops = (0..<threads).map { _ in RSAVerifyLoop(key: f.key, signature: f.signature, digest: f.digest, md: f.md) }
    let modExps = (0..<threads).map { _ in ModExpLoop(key: f.key, signature: f.signature) }
    for l in loops { precondition(l.run(20) == 20) }
    for m in modExps { precondition(m.run(20) == 20) }
    let evp = allThreads(threads, seconds) { t, n in loops[t].run(n) }
    let bare = allThreads(threads, seconds) { t, n in modExps[t].run(n) }
    return CeilingSample(
        evpPerSecond: Double(evp.calls) / evp.seconds,
        evpBusyCPUMicros: evp.cpuSeconds * 1e6 / Double(max(evp.calls, 1)),
        perSecond: Double(bare.calls) / bare.seconds, busyCPUMicros: bare.cpuSeconds * 1e6 / Double(max(bare.calls, 1)))
}

/// Runs `body(thread, count)` in chunks on `threads` threads until `seconds` of wall time have passed; returns the
/// calls made, the wall time and the CPU time of all threads.
private func allThreads(
    _ threads: Int, _ seconds: Double, _ body: @escaping (Int, Int) -> Int
) -> (calls: Int, seconds: Double, cpuSeconds: Double) {
    let results = UnsafeMutableBufferPointer<(Int, Double)>.allocate(capacity: threads)
    results.initialize(repeating: (0, 0))
    defer { results.deallocate() }
    let box = UncheckedSendable((results, body))
    let start = Measure.wall()
    let deadline = start + seconds
    DispatchQueue.concurrentPerform(iterations: threads) { t in
        let c0 = Measure.threadCPU()
        var n = 0
        while Measure.wall() < deadline { n += box.value.1(t, 200) }
        box.value.0[t] = (n, Measure.threadCPU() - c0)
    }
    let elapsed = Measure.wall() - start
    return (results.reduce(0) { $0 + $1.0 }, elapsed, results.reduce(0) { $0 + $1.1 })
}

/// Hands a value the benchmark knows to be used safely (disjoint indices, read-only) to other threads.
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
