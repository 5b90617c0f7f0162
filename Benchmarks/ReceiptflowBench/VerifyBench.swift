import CMallocCount
import COpenSSL
import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptSynth
import ReceiptVerify

/// Verify-stage benchmark, single-threaded, everything measured in the same run:
/// - `verify_us`: one warm-cache `ReceiptVerifier.verify` (signature, cached chain verdict, validity check);
/// - `floor_us`: one raw RSA-2048 `EVP_PKEY_verify` on a precomputed digest plus one SHA-256 of the same content
///   (the cost a verifier cannot avoid);
/// - `ratio`: verify_us / floor_us (target <= 1.3);
/// - `hit_rate`: chain-cache hits / lookups over the timed verifies;
/// - `allocs_per_verify` and `allocs_per_floor`: heap allocations per operation, OpenSSL's included (the
///   verifier's RSA check makes none once warm; `EVP_PKEY_verify` in the floor makes about 12).
/// The receipt is a synthetic ~6 KB-content SHA-256 receipt signed by the project's test CA (RSA-2048 leaf).
func runVerifyBench(iterations: Int) -> [String: Double] {
    let pki: TestPKI
    do { pki = try TestPKI.load(directory: nil) } catch {
        print("verify: cannot build the test PKI: \(error)")
        return [:]
    }
    let created: Int64 = 1_590_969_600_000  // 2020-06-01, inside the test leaf's validity
    var payload = PayloadBuilder()
    payload.utf8(0, "Production")
    payload.utf8(2, "com.example.receiptflow.bench")
    payload.utf8(3, "1.0")
    payload.date(12, created)
    for i in 0..<24 {  // about 250 bytes each: a 6 KB payload, the size openssl-notes.md measured
        var p = PayloadBuilder()
        p.integer(1701, 1)
        p.utf8(1702, "com.example.receiptflow.bench.product.\(i)")
        p.utf8(1703, "\(100_000_000_000 + i)")
        p.utf8(1705, "\(100_000_000_000 + i)")
        p.date(1704, created - Int64(i) * 86_400_000)
        p.date(1706, created - Int64(i) * 86_400_000)
        padEntry(&p)
        payload.inApp(p)
    }
    let der = ReceiptSigner.sign(
        payload: payload.encode(), identity: pki.identity(.valid), options: .init(digest: .sha256))

    let anchors: TrustAnchors
    do { anchors = try TrustAnchors(certificates: [(source: "test-root", bytes: pki.root.der)]) } catch {
        print("verify: \(error.message)")
        return [:]
    }
    let cache = ChainCache(anchors: anchors)
    let verifier = ReceiptVerifier(cache: cache)
    let parser = ReceiptParser()

    // Exactly sized, stable copies: the timed loops touch no Swift arrays.
    let derBuf = UnsafeMutableRawBufferPointer.allocate(byteCount: der.count, alignment: 16)
    derBuf.copyBytes(from: der)
    defer { derBuf.deallocate() }
    let input = UnsafeRawBufferPointer(derBuf)
    do { try parser.parse(input) } catch {
        print("verify: the benchmark receipt does not parse: \(error)")
        return [:]
    }
    let container = parser.container
    let contentBytes = parser.withContent(input) { [UInt8]($0) }
    let contentBuf = UnsafeMutableRawBufferPointer.allocate(byteCount: contentBytes.count, alignment: 16)
    contentBuf.copyBytes(from: contentBytes)
    defer { contentBuf.deallocate() }
    let content = UnsafeRawBufferPointer(contentBuf)

    // Warm-up: the one chain miss, then the verifier's per-key context.
    let first = verifier.verify(der: input, container: container, content: content, validationTime: created)
    guard first.verified else {
        print("verify: the benchmark receipt does not verify: \(first.detail ?? "?")")
        return [:]
    }
    for _ in 0..<20 { _ = verifier.verify(der: input, container: container, content: content, validationTime: created) }

    // The floor: the leaf's key, a verify context set up once, a reused digest context.
    let floor = RawRSAFloor(leafDER: pki.identity(.valid).leaf.der, signature: der, container: container)
    guard floor.check(content) else {
        print("verify: the raw RSA floor does not verify the benchmark signature")
        return [:]
    }

    // Alternate rounds of the two loops so both see the same machine noise.
    let rounds = 10
    let perRound = max(1, iterations / rounds)
    var verifyNanos: UInt64 = 0
    var floorNanos: UInt64 = 0
    var verifyMallocs: UInt64 = 0
    var floorMallocs: UInt64 = 0
    var failures = 0
    let hitsBefore = cache.hits
    let missesBefore = cache.misses
    for _ in 0..<rounds {
        var m = rf_malloc_count()
        var t = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<perRound {
            let o = verifier.verify(der: input, container: container, content: content, validationTime: created)
            if !o.verified { failures += 1 }
        }
        verifyNanos += DispatchTime.now().uptimeNanoseconds - t
        verifyMallocs += rf_malloc_count() - m

        m = rf_malloc_count()
        t = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<perRound where !floor.check(content) { failures += 1 }
        floorNanos += DispatchTime.now().uptimeNanoseconds - t
        floorMallocs += rf_malloc_count() - m
    }
    let n = Double(rounds * perRound)
    let hits = cache.hits - hitsBefore
    let lookups = hits + cache.misses - missesBefore
    let verifyMicros = Double(verifyNanos) / 1000 / n
    let floorMicros = Double(floorNanos) / 1000 / n
    return [
        "verify_us": verifyMicros,
        "floor_us": floorMicros,
        "ratio": verifyMicros / floorMicros,
        "hit_rate": lookups > 0 ? Double(hits) / Double(lookups) : 0,
        "allocs_per_verify": Double(verifyMallocs) / n,
        "allocs_per_floor": Double(floorMallocs) / n,
        "failures": Double(failures),
        "content_bytes": Double(content.count),
        "iterations": n,
    ]
}

/// Pads an in-app entry with an unknown attribute so the payload reaches the intended size.
private func padEntry(_ p: inout PayloadBuilder) {
    p.raw(1722, [UInt8](repeating: 0x41, count: 40))
}

/// One RSA-2048 PKCS #1 v1.5 verify of a precomputed SHA-256 digest plus one SHA-256 of the content: the least
/// any verifier must do per receipt.
final class RawRSAFloor {
    let ctx: OpaquePointer
    let mdCtx: OpaquePointer
    let md: OpaquePointer
    let signature: [UInt8]

    init(leafDER: [UInt8], signature der: [UInt8], container: SignedDataView) {
        let x509 = leafDER.withUnsafeBufferPointer { b -> OpaquePointer in
            var p = b.baseAddress
            return d2i_X509(nil, &p, b.count)!
        }
        let key = X509_get_pubkey(x509)!
        X509_free(x509)
        md = EVP_MD_fetch(nil, "SHA256", nil)!
        ctx = EVP_PKEY_CTX_new_from_pkey(nil, key, nil)!
        EVP_PKEY_free(key)  // the context holds its own reference
        precondition(EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, md) == 1)
        mdCtx = EVP_MD_CTX_new()!
        signature = Array(der[container.signature])
    }

    deinit {
        EVP_PKEY_CTX_free(ctx)
        EVP_MD_CTX_free(mdCtx)
        EVP_MD_free(md)
    }

    /// Hashes `content` and verifies the signature over that digest.
    func check(_ content: UnsafeRawBufferPointer) -> Bool {
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &digest) { d in
            var len: UInt32 = 0
            guard EVP_DigestInit_ex2(mdCtx, md, nil) == 1,
                EVP_DigestUpdate(mdCtx, content.baseAddress, content.count) == 1,
                EVP_DigestFinal_ex(mdCtx, d.baseAddress!.assumingMemoryBound(to: UInt8.self), &len) == 1
            else { return false }
            return signature.withUnsafeBufferPointer { s in
                EVP_PKEY_verify(ctx, s.baseAddress, s.count, d.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
                    == 1
            }
        }
    }
}
