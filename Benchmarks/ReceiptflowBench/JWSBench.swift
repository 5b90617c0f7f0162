import COpenSSL
import Dispatch
import Foundation
import ReceiptJWS
import ReceiptSynth
import ReceiptVerify

/// JWS verification against its ceiling: OpenSSL's ES256 check alone (`EVP_DigestVerify` with SHA-256 on P-256,
/// the leaf key already decoded) on the same threads, over the same generated signed transactions.
struct JWSBenchResult {
    var jws: Int
    var threads: Int
    var ceilingPerSecond: Double
    var evaluatorPerSecond: Double
    var ceilingCPUMicros: Double
    var evaluatorCPUMicros: Double
    var failures: Int
    var ratioWall: Double { evaluatorPerSecond / ceilingPerSecond }
    var ratioCPU: Double { ceilingCPUMicros / evaluatorCPUMicros }
}

/// Signed transactions of one leaf, each a different payload.
func makeJWSCorpus(count: Int) throws -> (pki: JWSTestPKI, texts: [String]) {
    let pki = try JWSTestPKI.load(directory: nil)
    let factory = JWSFactory(pki: pki)
    var texts: [String] = []
    let start: Int64 = 1_700_000_000_000
    for i in 0..<count {
        let t = start + Int64(i) * 3_600_000
        texts.append(
            factory.sign([
                "transactionId": String(2_000_000_000_000_000 + i), "originalTransactionId": "2000000000000000",
                "webOrderLineItemId": String(2_000_000_100_000_000 + i), "bundleId": "com.example.bench",
                "productId": "com.example.bench.monthly", "subscriptionGroupIdentifier": "21000000",
                "purchaseDate": t, "originalPurchaseDate": start, "expiresDate": t + 2_592_000_000, "quantity": 1,
                "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "signedDate": t + 1000,
                "environment": "Production", "transactionReason": "RENEWAL", "storefront": "USA",
                "storefrontId": "143441", "price": 9990, "currency": "USD", "appTransactionId": "704897469903383919",
            ]))
    }
    return (pki, texts)
}

/// Writes the corpus (`jws.txt`, one JWS per line) and its root (`root.der`) into `directory`, for the peers.
func writeJWSCorpus(count: Int, directory: String) throws {
    let (pki, texts) = try makeJWSCorpus(count: count)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try Data((texts.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/jws.txt"))
    try Data(pki.root.der).write(to: URL(fileURLWithPath: directory + "/root.der"))
}

func runJWSBench(count: Int, threads: Int, seconds: Double) throws -> JWSBenchResult {
    let (pki, texts) = try makeJWSCorpus(count: count)
    let inputs = texts.map { Array($0.utf8) }
    var decoded: [CompactJWS] = []
    for t in inputs {
        decoded.append(try t.withUnsafeBytes { b throws(JWSError) in try CompactJWS.parse(b) })
    }
    let parsed = decoded
    let leafDER = parsed[0].header.chain.der[0]
    guard
        let leaf = leafDER.withUnsafeBufferPointer({ b -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = b.baseAddress
            return d2i_X509(nil, &p, b.count)
        }), let key = X509_get_pubkey(leaf)
    else { throw SynthError("cannot decode the bench leaf") }
    defer {
        EVP_PKEY_free(key)
        X509_free(leaf)
    }
    // The DER signatures OpenSSL verifies, built once: the ceiling pays for the verification only.
    let signatures = parsed.map { derSignature($0.signature) }
    let sha256 = EVP_MD_fetch(nil, "SHA256", nil)
    defer { EVP_MD_free(sha256) }

    let anchors = try TrustAnchors(certificates: [(source: "bench", bytes: pki.root.der)])
    let evaluator = JWSEvaluator(verifier: JWSVerifier(anchors: anchors))
    var failures = 0
    for t in texts where evaluator.evaluate(Substring(t)).code != nil { failures += 1 }

    let handles = OpenSSLHandles(key: key, md: sha256)
    let ceiling = timed(threads: threads, seconds: seconds) { i in
        let j = parsed[i % parsed.count]
        let input = inputs[i % parsed.count]
        let sig = signatures[i % parsed.count]
        let ctx = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, handles.md, nil, handles.key) == 1 else { return false }
        return EVP_DigestVerify(ctx, sig, sig.count, input, j.signingInputCount) == 1
    }
    let evaluated = timed(threads: threads, seconds: seconds) { i in
        inputs[i % inputs.count].withUnsafeBytes { evaluator.evaluate($0).verified }
    }
    return JWSBenchResult(
        jws: count, threads: threads, ceilingPerSecond: ceiling.perSecond, evaluatorPerSecond: evaluated.perSecond,
        ceilingCPUMicros: ceiling.cpuMicrosPerOp, evaluatorCPUMicros: evaluated.cpuMicrosPerOp,
        failures: failures + ceiling.failures + evaluated.failures)
}

/// OpenSSL objects shared read-only by the ceiling's threads (EVP_PKEY and EVP_MD are safe to share once built).
struct OpenSSLHandles: @unchecked Sendable {
    let key: OpaquePointer
    let md: OpaquePointer?
}

/// What the threads of one timed run add up.
private final class Tally: @unchecked Sendable {
    let lock = NSLock()
    var ops = 0
    var cpu = 0.0
    var failures = 0
}

/// raw r || s (64 bytes) as the DER ECDSA-Sig-Value OpenSSL takes.
func derSignature(_ raw: [UInt8]) -> [UInt8] {
    func integer(_ b: ArraySlice<UInt8>) -> [UInt8] {
        var v = Array(b.drop { $0 == 0 })
        if v.isEmpty { v = [0] } else if v[0] & 0x80 != 0 { v.insert(0, at: 0) }
        return [0x02, UInt8(v.count)] + v
    }
    let r = integer(raw[0..<32])
    let s = integer(raw[32..<64])
    return [0x30, UInt8(r.count + s.count)] + r + s
}

/// Runs `op(i)` on `threads` threads for about `seconds`: operations per wall second, CPU µs per operation.
func timed(
    threads: Int, seconds: Double, _ op: @escaping @Sendable (Int) -> Bool
) -> (perSecond: Double, cpuMicrosPerOp: Double, failures: Int) {
    let tally = Tally()
    let start = Measure.wall()
    DispatchQueue.concurrentPerform(iterations: threads) { t in
        let cpu0 = Measure.threadCPU()
        var n = 0
        var bad = 0
        var i = t * 7919
        while Measure.wall() - start < seconds {
            for _ in 0..<32 {
                if !op(i) { bad += 1 }
                i += 1
                n += 1
            }
        }
        let used = Measure.threadCPU() - cpu0
        tally.lock.lock()
        tally.ops += n
        tally.cpu += used
        tally.failures += bad
        tally.lock.unlock()
    }
    let wall = Measure.wall() - start
    return (Double(tally.ops) / wall, tally.cpu * 1e6 / Double(max(tally.ops, 1)), tally.failures)
}
