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

    /// Checks the signature, the chain and the validity of every chain certificate at `time`.
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
        check(der, container, content, time.resolve(creationDate: creationDate), receiptDigest)
    }

    /// `verify(der:container:content:at:creationDate:receiptDigest:)` at the fixed instant `validationTime`
    /// (epoch milliseconds).
    public func verify(
        der: UnsafeRawBufferPointer, container: SignedDataView, content: UnsafeRawBufferPointer, validationTime: Int64,
        receiptDigest: SHA256Digest? = nil
    ) -> VerifyOutcome {
        check(der, container, content, validationTime, receiptDigest)
    }

    /// The checks, with `validationTime` nil when there is no time to judge the validity dates at.
    private func check(
        _ der: UnsafeRawBufferPointer, _ container: SignedDataView, _ content: UnsafeRawBufferPointer,
        _ validationTime: Int64?, _ receiptDigest: SHA256Digest?
    ) -> VerifyOutcome {
        let alg = container.digestAlgorithm
        guard Self.rangesInside(der, container) else {
            return VerifyOutcome(.malformedDER, .malformedRanges, entry: nil, digest: alg, time: validationTime)
        }
        // The same bytes seen before: their signature verdict stands, if their chain is still held.
        if let receiptDigest, let seen = cache.signatures.verdict(for: receiptDigest),
            let entry = chain(key: seen.chain)
        {
            return judge(seen.failure, entry, alg, validationTime)
        }
        let entry = chain(der, container)
        let failure = signatureFailure(der, container, content, entry)
        if let receiptDigest {
            cache.signatures.store(.init(chain: entry.key, failure: failure), for: receiptDigest)
        }
        return judge(failure, entry, alg, validationTime)
    }

    /// The outcome from the signature verdict, then every chain certificate's validity at the validation time.
    private func judge(
        _ failure: (code: ErrorCode, reason: VerifyOutcome.Reason)?, _ entry: ChainEntry, _ alg: DigestAlgorithm,
        _ validationTime: Int64?
    ) -> VerifyOutcome {
        func outcome(_ code: ErrorCode?, _ reason: VerifyOutcome.Reason) -> VerifyOutcome {
            VerifyOutcome(code, reason, entry: entry, digest: alg, time: validationTime)
        }
        if let failure { return outcome(failure.code, failure.reason) }
        guard let validationTime else { return outcome(.malformedAttribute, .missingCreationDate) }
        if validationTime > entry.validUntil { return outcome(.certificateExpired, .expired) }
        if validationTime < entry.validFrom { return outcome(.certificateNotYetValid, .notYetValid) }
        return outcome(nil, .none)
    }

    /// Why the receipt's signature (or the chain it names) is not accepted, or nil when it is: everything that
    /// the receipt's bytes alone decide. Cheap refusals come first, a chain known to fail before the signature.
    private func signatureFailure(
        _ der: UnsafeRawBufferPointer, _ container: SignedDataView, _ content: UnsafeRawBufferPointer,
        _ entry: ChainEntry
    ) -> (code: ErrorCode, reason: VerifyOutcome.Reason)? {
        guard entry.signerIndex != nil else { return (.signerNotFound, .signerNotFound) }
        // Algorithms: SHA-1 or SHA-256, with RSA under either spelling of the signature algorithm.
        let alg = container.digestAlgorithm
        guard let md = Digests.handle(alg) else { return (.unsupportedAlgorithm, .unsupportedDigest) }
        switch container.signatureAlgorithm {
        case .rsaEncryption: break
        case .sha1WithRSA where alg == .sha1: break
        case .sha256WithRSA where alg == .sha256: break
        default: return (.unsupportedAlgorithm, .unsupportedSignatureAlgorithm)
        }
        // A SignerInfo digest absent from the SignedData's list is an inconsistent signature declaration.
        if container.digestAlgorithmMismatch { return (.badSignature, .digestAlgorithmMismatch) }
        // A chain already known to fail (or to hold a refused key) is rejected before its signature is checked.
        switch entry.verdict {
        case .trusted: break
        case .untrusted: return (.untrustedChain, .chain)
        case .policy: return (.certificatePolicy, .chain)
        case .refusedKey: return (.unsupportedAlgorithm, .chain)
        }
        guard let key = entry.publicKey else { return (.unsupportedAlgorithm, .unsupportedKey) }

        // The signed digest: of the content, or of the signed attributes when present.
        var digest = SHA256Digest()
        guard digest.withUnsafeMutableBytes({ out in hasher.digest(md, content, into: out) }) else {
            return (.badSignature, .signatureMismatch)
        }
        if let attrs = container.signedAttributes {
            guard let mdRange = container.messageDigest else { return (.badSignature, .missingMessageDigest) }
            let same = digest.withUnsafeBytes { d in
                // mdRange lies inside der (rangesInside); d holds 32 >= md.size bytes.
                mdRange.count == md.size && memcmp(der.baseAddress! + mdRange.lowerBound, d.baseAddress!, md.size) == 0
            }
            guard same else { return (.badSignature, .messageDigestMismatch) }
            guard attrs.count >= 2 else { return (.badSignature, .signatureMismatch) }
            // The signature covers the DER SET OF attributes: the same bytes with the [0] IMPLICIT tag (0xA0)
            // replaced by SET (0x31). Digesting the new tag byte and then the rest is digesting a re-tagged copy.
            var setTag: UInt8 = 0x31
            let rest = UnsafeRawBufferPointer(rebasing: der[(attrs.lowerBound + 1)..<attrs.upperBound])
            let ok = Swift.withUnsafeBytes(of: &setTag) { tag in
                digest.withUnsafeMutableBytes { out in hasher.digest(md, tag, rest, into: out) }
            }
            guard ok else { return (.badSignature, .signatureMismatch) }
        }

        // RSA PKCS #1 v1.5: the DigestInfo inside the signature must name `md` and hold `digest`.
        let signature = UnsafeRawBufferPointer(rebasing: der[container.signature])
        let verified = digest.withUnsafeBytes { d -> Bool in
            // d holds 32 bytes; md.size (20 or 32) of them are the digest.
            pkcs1.verify(
                key, signature: signature, digest: UnsafeRawBufferPointer(rebasing: d[0..<md.size]), algorithm: alg)
        }
        return verified ? nil : (.badSignature, .signatureMismatch)
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
