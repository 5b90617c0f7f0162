import COpenSSL
import ReceiptModel

/// The verdict on one JWS signature: nil `code` when it passed.
public struct JWSCheck: Sendable, Equatable {
    public var code: ErrorCode?
    public var detail: String?
    /// Hex SHA-256 of the leaf certificate (`x5c[0]`), when it could be decoded.
    public var leafSHA256: String?
    /// What the trust policies judge of this JWS (its chain and signing time); nil when verification stopped
    /// before the chain was known.
    public var trust: TrustFacts? = nil
    /// True when the ES256 signature was checked and matched. False also when it was not checked because the
    /// chain, or its validity at the signing time, is known to fail its trust policies.
    public var signatureVerified = false

    /// No check failed and the signature matched (on a check from `establish`, before the trust policies judged).
    public var passed: Bool { code == nil && signatureVerified }

    public static func == (a: JWSCheck, b: JWSCheck) -> Bool {
        a.code == b.code && a.detail == b.detail && a.leafSHA256 == b.leafSHA256
            && a.signatureVerified == b.signatureVerified
    }
}

/// Verifies StoreKit 2 / App Store Server JWS signatures as Apple's libraries do offline: ES256 only, the `x5c`
/// chain (leaf, intermediate, root) ending at a configured anchor, Apple's leaf and intermediate OIDs, every
/// certificate valid at the time given (the payload's `signedDate`), and the signature over `header.payload`.
///
/// OpenSSL does every cryptographic computation; this type only assembles its inputs. Chain verdicts are cached
/// per certificate set in a `DigestKeyedCache` (bounded, sharded, evicting its oldest entries), keyed by the SHA-256
/// of the whole certificates, so a stream of JWS signed by the same leaf verifies each chain once. A miss builds
/// the chain's entry with no lock held: a slow or hostile chain never makes workers checking other chains wait
/// (two workers missing the same chain at once both verify it, and the first to store it wins).
public final class JWSVerifier: @unchecked Sendable {
    /// The anchors every verdict is reached against.
    public let anchors: TrustAnchors
    /// The most certificate sets whose verdicts are held at once; past it, the oldest are evicted.
    public let capacity: Int

    /// Chain entries by the SHA-256 of their certificates (`JWSCertificateChain.key`).
    private let entries: DigestKeyedCache<JWSChainEntry>
    /// Builds the entry of a chain missing from `entries`: `JWSChainEntry.build`, replaced only by tests.
    private let build: @Sendable ([[UInt8]], TrustAnchors) -> JWSChainEntry
    /// The chain looked up last and its entry, compared by identity first: headers decoded once share their
    /// chain object, so a stream of JWS from one leaf skips the table's lookup per JWS. The chain is held, so its
    /// identity cannot be reused by another object while it is here.
    private let recentLock = Lock()
    private var recentChain: JWSCertificateChain? = nil
    private var recentEntry: JWSChainEntry? = nil

    public convenience init(anchors: TrustAnchors, capacity: Int = 1024) {
        self.init(anchors: anchors, capacity: capacity, build: { JWSChainEntry.build($0, anchors: $1) })
    }

    /// - Parameter build: makes the entry of a chain not yet held.
    init(
        anchors: TrustAnchors, capacity: Int, build: @escaping @Sendable ([[UInt8]], TrustAnchors) -> JWSChainEntry
    ) {
        self.anchors = anchors
        entries = DigestKeyedCache(capacity: capacity, shards: capacity >= 256 ? 16 : 1)
        self.capacity = entries.capacity
        self.build = build
    }

    /// Distinct certificate sets verified so far and held.
    public var cachedChains: Int { entries.count }

    /// Checks `signature` (raw `r || s`, 64 bytes) over `signingInput` (the ASCII `header.payload`) with the
    /// leaf of `certificates` (the decoded `x5c`), the chain to an anchor and its validity at `time` (epoch ms):
    /// `establish`, then the standard trust policies (`TrustPolicies.standard`) judge what it established.
    public func verify(
        signingInput: UnsafeRawBufferPointer, signature: [UInt8], chain: JWSCertificateChain, at time: Int64
    ) -> JWSCheck {
        var check = establish(signingInput: signingInput, signature: signature, chain: chain, at: time)
        guard check.code == nil, let trust = check.trust else { return check }
        if let failure = TrustPolicies.standard.judge(trust) {
            check.code = failure.code
            check.detail = failure.sentence(trust)
        } else if !check.signatureVerified {
            check.code = .untrustedChain
            check.detail = "the signature was not checked"
        }
        return check
    }

    /// What the JWS's bytes decide (Apple's three certificates, the key kinds, the leaf's P-256 key, the ES256
    /// signature), with the facts the trust policies judge (`check.trust`: the chain and `time`), without judging
    /// them: the check's code is set only by a check of the bytes. A chain known to fail its trust policies, or
    /// not valid at `time`, is not worth a signature check: the signature is then left unchecked
    /// (`signatureVerified` false) for the policies to reject the JWS.
    public func establish(
        signingInput: UnsafeRawBufferPointer, signature: [UInt8], chain: JWSCertificateChain, at time: Int64
    ) -> JWSCheck {
        guard chain.der.count == 3 else {
            return JWSCheck(
                code: .untrustedChain,
                detail: "the x5c header holds \(chain.der.count) certificates; Apple signs with exactly three "
                    + "(leaf, intermediate, root)")
        }
        let entry = self.entry(chain)
        var check = JWSCheck(code: nil, detail: nil, leafSHA256: entry.leafSHA256)
        if case .refusedKey(let why) = entry.verdict {
            check.code = .unsupportedAlgorithm
            check.detail = why
            return check
        }
        let facts = TrustFacts(chain: entry.chain, signedAt: time, timeName: "the JWS's signedDate")
        check.trust = facts
        guard facts.allHold else { return check }
        guard let key = entry.key else {
            check.code = .untrustedChain
            check.detail = "the leaf certificate holds no P-256 public key"
            return check
        }
        guard let der = ECDSASignatureDER.encode(rawP256: signature) else {
            check.code = .badSignature
            check.detail = "an ES256 signature is 64 bytes (r || s); this one is \(signature.count)"
            return check
        }
        if Self.verifySHA256ECDSA(key: key, signature: der, message: signingInput) {
            check.signatureVerified = true
        } else {
            check.code = .badSignature
            check.detail = "the ES256 signature does not match header.payload"
        }
        return check
    }

    /// The cached verdict of `chain`, reached once per distinct certificate set while it is held. A miss is
    /// built with no lock held.
    private func entry(_ chain: JWSCertificateChain) -> JWSChainEntry {
        let recent = recentLock.withLock { recentChain === chain ? recentEntry : nil }
        if let recent { return recent }
        let entry = entries.value(for: chain.key) ?? entries.insert(build(chain.der, anchors), for: chain.key)
        recentLock.withLock {
            recentChain = chain
            recentEntry = entry
        }
        return entry
    }

    /// OpenSSL's ECDSA verification of `signature` (DER) over SHA-256 of `message`.
    private static func verifySHA256ECDSA(
        key: OpaquePointer, signature: [UInt8], message: UnsafeRawBufferPointer
    ) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { fatalError("OpenSSL allocation failed") }
        defer {
            EVP_MD_CTX_free(ctx)
            ERR_clear_error()
        }
        guard EVP_DigestVerifyInit(ctx, nil, Digests.sha256.md, nil, key) == 1 else { return false }
        return signature.withUnsafeBufferPointer { sig in
            let msg = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg, message.count) == 1
        }
    }

}

/// The certificates of one JWS header's `x5c`, leaf first, with the key the verifier caches their verdict under.
/// Made once per distinct header.
public final class JWSCertificateChain: Sendable {
    public let der: [[UInt8]]
    /// The SHA-256, computed by OpenSSL, of the certificates, each after its length (so that two different splits
    /// of the same bytes differ).
    let key: SHA256Digest

    public init(_ der: [[UInt8]]) {
        self.der = der
        key = ContentHasher().sha256 { part in
            for c in der { c.withUnsafeBytes { part($0) } }
        }
    }
}

/// What is learnt once about one `x5c` set: the chain verdict, the validity windows of its certificates, and
/// the leaf's public key. Immutable after creation.
final class JWSChainEntry: @unchecked Sendable {
    let verdict: ChainVerdict
    /// The facts the trust policies judge: the verdict and the certificates' validity.
    let chain: VerifiedChain
    /// The leaf's EC P-256 key (owned), or nil when the leaf holds another kind.
    let key: OpaquePointer?
    let leafSHA256: String?

    init(verdict: ChainVerdict, windows: [CertificateWindow], key: OpaquePointer?, leafSHA256: String?) {
        self.verdict = verdict
        self.chain = VerifiedChain(verdict, windows: windows)
        self.key = key
        self.leafSHA256 = leafSHA256
    }

    deinit {
        if let key { EVP_PKEY_free(key) }
    }

    static func build(_ certificates: [[UInt8]], anchors: TrustAnchors) -> JWSChainEntry {
        let decoded = certificates.map { c in c.withUnsafeBytes { OpenSSL.certificate(der: $0) } }
        defer { decoded.forEach { if let x = $0 { X509_free(x) } } }
        let leafSHA = certificates[0].withUnsafeBytes { OpenSSL.sha256Hex($0) }
        guard let leaf = decoded[0], let intermediate = decoded[1], decoded[2] != nil else {
            let which = decoded.firstIndex { $0 == nil } ?? 0
            return JWSChainEntry(
                verdict: .untrusted("x5c[\(which)] is not a DER certificate"), windows: [], key: nil,
                leafSHA256: leafSHA)
        }
        // The root Apple sends must be one of the configured anchors, byte for byte; the chain is then built
        // from the anchors' store, never from the root the JWS carries.
        let rootIsAnchor = certificates[2].withUnsafeBytes { anchors.isAnchor($0) }
        guard rootIsAnchor else {
            return JWSChainEntry(
                verdict: .untrusted("x5c[2] is not a configured trust anchor"), windows: [], key: nil,
                leafSHA256: leafSHA)
        }
        // Keys no Apple certificate has are refused before the chain's signatures are checked.
        if let why = KeyShape.refusal(certificates: [leaf, intermediate]) {
            return JWSChainEntry(verdict: .refusedKey(why), windows: [], key: nil, leafSHA256: leafSHA)
        }
        var key = X509_get_pubkey(leaf)
        if let k = key, !isP256(k) {
            EVP_PKEY_free(k)
            key = nil
        }
        ERR_clear_error()
        let (verdict, windows) = ChainBuilder.verifyChain(leaf: leaf, intermediates: [intermediate], anchors: anchors)
        return JWSChainEntry(verdict: verdict, windows: windows, key: key, leafSHA256: leafSHA)
    }

    /// True for an EC key on prime256v1, the only curve ES256 allows.
    private static func isP256(_ key: OpaquePointer) -> Bool {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var len = 0
        guard EVP_PKEY_get_utf8_string_param(key, "group", &name, name.count, &len) == 1 else { return false }
        return String(decoding: name.prefix(len).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
    }
}

/// The DER `ECDSA-Sig-Value` (SEQUENCE of two INTEGERs) that OpenSSL verifies, built from a JWS's raw `r || s`.
enum ECDSASignatureDER {
    /// nil unless `raw` is exactly 64 bytes. One array, written in place.
    static func encode(rawP256 raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64 else { return nil }
        let r = raw[0..<32]
        let s = raw[32..<64]
        // At most 2 * (2 + 33) = 70 content bytes: the short length form always fits.
        var out: [UInt8] = []
        out.reserveCapacity(72)
        out.append(0x30)
        out.append(UInt8(integerLength(r) + integerLength(s)))
        appendInteger(r, to: &out)
        appendInteger(s, to: &out)
        return out
    }

    /// The unsigned big-endian `bytes` without their leading zeros (at least one byte kept).
    private static func significant(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let v = bytes.drop { $0 == 0 }
        return v.isEmpty ? bytes.suffix(1) : v
    }

    /// The length of the DER INTEGER of `bytes`, tag and length included.
    private static func integerLength(_ bytes: ArraySlice<UInt8>) -> Int {
        let v = significant(bytes)
        return 2 + v.count + (v.first! & 0x80 != 0 ? 1 : 0)
    }

    /// A DER INTEGER of the unsigned big-endian `bytes`: leading zeros dropped, one zero added when the top bit
    /// is set, zero encoded as a single 00.
    private static func appendInteger(_ bytes: ArraySlice<UInt8>, to out: inout [UInt8]) {
        let v = significant(bytes)
        let pad = v.first! & 0x80 != 0
        out.append(0x02)
        out.append(UInt8(v.count + (pad ? 1 : 0)))
        if pad { out.append(0) }
        out.append(contentsOf: v)
    }
}
