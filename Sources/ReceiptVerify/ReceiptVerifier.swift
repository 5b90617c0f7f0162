import COpenSSL
import ReceiptDER
import ReceiptModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Verifies receipts the way `openssl cms -verify` would, but by hand (openssl-notes.md B.2): the parser's ranges,
/// the signer's key and chain verdict from the shared `ChainCache`, the digests by OpenSSL (`ContentHasher`), and
/// one RSA PKCS #1 v1.5 verification by OpenSSL (`PKCS1Verifier`). Certificates are decoded only on a cache miss.
///
/// A receipt whose bytes were verified before in this run (the caller passes their SHA-256) reuses that
/// signature verdict (`ReceiptVerdicts`); the validity of its chain at its own date is still judged per receipt.
///
/// The verifier computes; the trust policies (`TrustPolicy`) judge. `establish` returns what the bytes decide with
/// the facts of the chain and the signing time, which the run's policy list judges; `verify` applies the standard
/// trust policies itself.
///
/// One per worker thread: it owns OpenSSL contexts, which must not be shared.
/// The validation time is always passed in; the verifier never reads the clock.
public final class ReceiptVerifier {
    /// The shared cache (and through it, the trust anchors).
    public let cache: ChainCache

    private let pkcs1 = PKCS1Verifier()
    private let hasher = ContentHasher()
    /// This worker's most recently used chains, newest first, compared byte for byte before the shared cache is
    /// asked (which would hash the certificates).
    private var recent: [ChainEntry] = []
    private static let recentCount = 4

    public init(cache: ChainCache) {
        self.cache = cache
        recent.reserveCapacity(Self.recentCount)
    }

    /// Checks the signature, the chain and the validity of every chain certificate at `time`: `establish`, then the
    /// standard trust policies (`TrustPolicies.standard`) judge what it established.
    ///
    /// - Parameters:
    ///   - der: the receipt bytes the parser read; every range of `container` except `content` indexes them.
    ///   - container: the parser's view of the SignedData.
    ///   - content: the encapsulated content (the payload), possibly in the parser's scratch buffer.
    ///   - time: when the certificates must be valid.
    ///   - creationDate: the receipt creation date (attribute 12), epoch milliseconds, when the receipt has one.
    ///     With `time == .receiptCreationDate` and no creation date, everything but the validity dates is checked
    ///     and, when that passes, the receipt is rejected as `malformed_attribute` (nothing to judge the dates at).
    ///   - receiptDigest: the SHA-256 of `der`, when the caller computed it: the signature verdict is then
    ///     remembered, or reused when these bytes were verified before.
    public func verify(
        der: UnsafeRawBufferPointer, container: SignedDataView, content: UnsafeRawBufferPointer,
        at time: ValidationTime, creationDate: Int64?, receiptDigest: SHA256Digest? = nil
    ) -> VerifyOutcome {
        establish(
            der: der, container: container, content: content, at: time, creationDate: creationDate,
            receiptDigest: receiptDigest
        ).judged(by: TrustPolicies.standard)
    }

    /// `verify(der:container:content:at:creationDate:receiptDigest:)` at the fixed instant `validationTime`
    /// (epoch milliseconds).
    public func verify(
        der: UnsafeRawBufferPointer, container: SignedDataView, content: UnsafeRawBufferPointer, validationTime: Int64,
        receiptDigest: SHA256Digest? = nil
    ) -> VerifyOutcome {
        let time = ValidationTime.instant(validationTime)
        return check(der, container, content, validationTime, time.name, receiptDigest)
            .judged(by: TrustPolicies.standard)
    }

    /// Everything the receipt's bytes decide (the signer, the algorithms, the digests and the RSA signature, in
    /// that order), with the facts the trust policies judge (`outcome.trust`: the chain and the signing time),
    /// without judging them: the outcome's error is set only by a check of the bytes. A chain known to fail its
    /// trust policies is not worth a signature check: the signature is then left unchecked
    /// (`signatureVerified` false) for the policies to reject the receipt. Parameters as for `verify`.
    public func establish(
        der: UnsafeRawBufferPointer, container: SignedDataView, content: UnsafeRawBufferPointer,
        at time: ValidationTime, creationDate: Int64?, receiptDigest: SHA256Digest? = nil
    ) -> VerifyOutcome {
        check(der, container, content, time.resolve(creationDate: creationDate), time.name, receiptDigest)
    }

    /// The checks of the bytes, with `validationTime` nil when there is no time to judge the validity dates at.
    private func check(
        _ der: UnsafeRawBufferPointer, _ container: SignedDataView, _ content: UnsafeRawBufferPointer,
        _ validationTime: Int64?, _ timeName: String, _ receiptDigest: SHA256Digest?
    ) -> VerifyOutcome {
        let alg = container.digestAlgorithm
        guard Self.rangesInside(der, container) else {
            return VerifyOutcome(.malformedDER, .malformedRanges, entry: nil, digest: alg, time: validationTime)
        }
        // The same bytes seen before: their signature verdict stands, if their chain is still held.
        if let receiptDigest, let seen = cache.signatures.verdict(for: receiptDigest),
            let entry = chain(key: seen.chain)
        {
            return outcome(seen.signature, entry, alg, validationTime, timeName)
        }
        let entry = chain(der, container)
        let signature = signatureCheck(der, container, content, entry)
        if let receiptDigest {
            cache.signatures.store(.init(chain: entry.key, signature: signature), for: receiptDigest)
        }
        return outcome(signature, entry, alg, validationTime, timeName)
    }

    /// The outcome of the signature check, with the facts the trust policies judge.
    private func outcome(
        _ signature: SignatureCheck, _ entry: ChainEntry, _ alg: DigestAlgorithm, _ validationTime: Int64?,
        _ timeName: String
    ) -> VerifyOutcome {
        let facts = TrustFacts(chain: entry.chain, signedAt: validationTime, timeName: timeName)
        switch signature {
        case .failed(let code, let reason):
            return VerifyOutcome(code, reason, entry: entry, digest: alg, time: validationTime, trust: facts)
        case .unchecked:
            return VerifyOutcome(nil, .none, entry: entry, digest: alg, time: validationTime, trust: facts)
        case .verified:
            return VerifyOutcome(
                nil, .none, entry: entry, digest: alg, time: validationTime, trust: facts, signatureVerified: true)
        }
    }

    /// What the receipt's bytes decide about its signature. Cheap refusals come first; a chain known to fail its
    /// trust policies is left to them, before the signature is checked.
    private func signatureCheck(
        _ der: UnsafeRawBufferPointer, _ container: SignedDataView, _ content: UnsafeRawBufferPointer,
        _ entry: ChainEntry
    ) -> SignatureCheck {
        guard entry.signerIndex != nil else { return .failed(.signerNotFound, .signerNotFound) }
        // Algorithms: SHA-1 or SHA-256, with RSA under either spelling of the signature algorithm.
        let alg = container.digestAlgorithm
        guard let md = Digests.handle(alg) else { return .failed(.unsupportedAlgorithm, .unsupportedDigest) }
        switch container.signatureAlgorithm {
        case .rsaEncryption: break
        case .sha1WithRSA where alg == .sha1: break
        case .sha256WithRSA where alg == .sha256: break
        default: return .failed(.unsupportedAlgorithm, .unsupportedSignatureAlgorithm)
        }
        // A SignerInfo digest absent from the SignedData's list is an inconsistent signature declaration.
        if container.digestAlgorithmMismatch { return .failed(.badSignature, .digestAlgorithmMismatch) }
        // A key of a kind no Apple certificate has is refused; a chain that fails its trust policies (no anchor,
        // or without Apple's OIDs) is rejected by them, before its signature is checked.
        if case .refusedKey = entry.verdict { return .failed(.unsupportedAlgorithm, .chain) }
        guard entry.chain.anchored && entry.chain.policyOIDsOK else { return .unchecked }
        guard let key = entry.publicKey else { return .failed(.unsupportedAlgorithm, .unsupportedKey) }

        // The signed digest: of the content, or of the signed attributes when present.
        var digest = SHA256Digest()
        guard digest.withUnsafeMutableBytes({ out in hasher.digest(md, content, into: out) }) else {
            return .failed(.badSignature, .signatureMismatch)
        }
        if let attrs = container.signedAttributes {
            guard let mdRange = container.messageDigest else { return .failed(.badSignature, .missingMessageDigest) }
            let same = digest.withUnsafeBytes { d in
                // mdRange lies inside der (rangesInside); d holds 32 >= md.size bytes.
                mdRange.count == md.size && memcmp(der.baseAddress! + mdRange.lowerBound, d.baseAddress!, md.size) == 0
            }
            guard same else { return .failed(.badSignature, .messageDigestMismatch) }
            guard attrs.count >= 2 else { return .failed(.badSignature, .signatureMismatch) }
            // The signature covers the DER SET OF attributes: the same bytes with the [0] IMPLICIT tag (0xA0)
            // replaced by SET (0x31). Digesting the new tag byte and then the rest is digesting a re-tagged copy.
            var setTag: UInt8 = 0x31
            let rest = UnsafeRawBufferPointer(rebasing: der[(attrs.lowerBound + 1)..<attrs.upperBound])
            let ok = Swift.withUnsafeBytes(of: &setTag) { tag in
                digest.withUnsafeMutableBytes { out in hasher.digest(md, tag, rest, into: out) }
            }
            guard ok else { return .failed(.badSignature, .signatureMismatch) }
        }

        // RSA PKCS #1 v1.5: the DigestInfo inside the signature must name `md` and hold `digest`.
        let signature = UnsafeRawBufferPointer(rebasing: der[container.signature])
        let verified = digest.withUnsafeBytes { d -> Bool in
            // d holds 32 bytes; md.size (20 or 32) of them are the digest.
            pkcs1.verify(
                key, signature: signature, digest: UnsafeRawBufferPointer(rebasing: d[0..<md.size]), algorithm: alg)
        }
        return verified ? .verified : .failed(.badSignature, .signatureMismatch)
    }

    /// The chain entry for `der`'s certificates and signer identifier: one of this worker's recent chains when
    /// the bytes are the same, else the shared cache's.
    private func chain(_ der: UnsafeRawBufferPointer, _ c: SignedDataView) -> ChainEntry {
        for e in recent
        where e.matches(der, certificates: c.certificates, issuer: c.signerIssuer, serial: c.signerSerial) {
            cache.noteHit()
            return e
        }
        let e = cache.entry(der, container: c, hasher: hasher)
        remember(e)
        return e
    }

    /// The chain entry stored under `key`, if still held.
    private func chain(key: SHA256Digest) -> ChainEntry? {
        if let e = recent.first(where: { $0.key == key }) {
            cache.noteHit()
            return e
        }
        guard let e = cache.entry(key: key) else { return nil }
        cache.noteHit()
        remember(e)
        return e
    }

    private func remember(_ e: ChainEntry) {
        if recent.count == Self.recentCount { recent.removeLast() }
        recent.insert(e, at: 0)
    }

    /// Every range the verifier reads must lie inside `der`; the parser guarantees it, but a bad range would read
    /// out of bounds, so it is checked once here (a few comparisons).
    static func rangesInside(_ der: UnsafeRawBufferPointer, _ c: SignedDataView) -> Bool {
        let n = der.count
        @inline(__always) func ok(_ r: Range<Int>) -> Bool { r.lowerBound >= 0 && r.upperBound <= n }
        guard der.baseAddress != nil, ok(c.signerIssuer), ok(c.signerSerial), ok(c.signature) else { return false }
        for r in c.certificates where !ok(r) { return false }
        if let a = c.signedAttributes, !ok(a) { return false }
        if let m = c.messageDigest, !ok(m) { return false }
        return true
    }
}
