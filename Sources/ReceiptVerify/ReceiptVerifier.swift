import COpenSSL
import ReceiptDER
import ReceiptModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Verifies receipts the way `openssl cms -verify` would, but by hand (openssl-notes.md B.2): the parser's ranges,
/// a prefetched digest, the signer's key and chain verdict from the shared `ChainCache`, and one RSA PKCS #1 v1.5
/// verification by OpenSSL (`PKCS1Verifier`). Certificates are decoded only on a cache miss.
///
/// One per worker thread: it owns OpenSSL verification contexts, which must not be shared.
/// The validation time is always passed in; the verifier never reads the clock.
public final class ReceiptVerifier {
    /// The shared cache (and through it, the trust anchors).
    public let cache: ChainCache

    private let pkcs1 = PKCS1Verifier()

    public init(cache: ChainCache) {
        self.cache = cache
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
    ///   - contentDigest: the digest of `content`, when the caller computed it already (two receipts at a time,
    ///     `ContentHasher.digests`); used only if it is of this very buffer with the SignerInfo's algorithm.
    public func verify(
        der: UnsafeRawBufferPointer, container: SignedDataView, content: UnsafeRawBufferPointer,
        at time: ValidationTime,
        creationDate: Int64?, contentDigest: ContentDigest? = nil
    ) -> VerifyOutcome {
        check(der, container, content, time.resolve(creationDate: creationDate), contentDigest)
    }

    /// `verify(der:container:content:at:creationDate:contentDigest:)` at the fixed instant `validationTime`
    /// (epoch milliseconds).
    public func verify(
        der: UnsafeRawBufferPointer, container: SignedDataView, content: UnsafeRawBufferPointer, validationTime: Int64,
        contentDigest: ContentDigest? = nil
    ) -> VerifyOutcome {
        check(der, container, content, validationTime, contentDigest)
    }

    /// The checks, with `validationTime` nil when there is no time to judge the validity dates at.
    private func check(
        _ der: UnsafeRawBufferPointer, _ container: SignedDataView, _ content: UnsafeRawBufferPointer,
        _ validationTime: Int64?, _ contentDigest: ContentDigest?
    ) -> VerifyOutcome {
        let alg = container.digestAlgorithm
        func outcome(_ code: ErrorCode?, _ reason: VerifyOutcome.Reason, _ entry: ChainEntry?) -> VerifyOutcome {
            VerifyOutcome(code, reason, entry: entry, digest: alg, time: validationTime)
        }
        guard Self.rangesInside(der, container) else { return outcome(.malformedDER, .malformedRanges, nil) }

        // Find the signer (by the exact bytes of the certificates and the signer identifier).
        let entry = cache.entry(der, container: container)
        guard entry.signerIndex != nil else { return outcome(.signerNotFound, .signerNotFound, entry) }

        // Algorithms: SHA-1 or SHA-256, with RSA under either spelling of the signature algorithm.
        let md: DigestHandle
        switch alg {
        case .sha1: md = Digests.sha1
        case .sha256: md = Digests.sha256
        case .unsupported: return outcome(.unsupportedAlgorithm, .unsupportedDigest, entry)
        }
        switch container.signatureAlgorithm {
        case .rsaEncryption: break
        case .sha1WithRSA where alg == .sha1: break
        case .sha256WithRSA where alg == .sha256: break
        default: return outcome(.unsupportedAlgorithm, .unsupportedSignatureAlgorithm, entry)
        }
        // A SignerInfo digest absent from the SignedData's list is an inconsistent signature declaration.
        if container.digestAlgorithmMismatch { return outcome(.badSignature, .digestAlgorithmMismatch, entry) }
        guard let key = entry.publicKey else {
            if case .untrusted = entry.verdict { return outcome(.untrustedChain, .chain, entry) }
            return outcome(.unsupportedAlgorithm, .unsupportedKey, entry)
        }

        // The signed digest: of the content, or of the signed attributes when present.
        var digest = SHA256Digest()
        if let pre = contentDigest, pre.matches(content, alg) {
            digest = pre.value
        } else {
            let hashed = digest.withUnsafeMutableBytes { out in
                DigestEngine.digest(md, parts: content, nil, into: out)
            }
            guard hashed else { return outcome(.badSignature, .signatureMismatch, entry) }
        }
        if let attrs = container.signedAttributes {
            guard let mdRange = container.messageDigest else {
                return outcome(.badSignature, .missingMessageDigest, entry)
            }
            let same = digest.withUnsafeBytes { d in
                // mdRange lies inside der (rangesInside); d holds at least md.size bytes.
                mdRange.count == md.size && memcmp(der.baseAddress! + mdRange.lowerBound, d.baseAddress!, md.size) == 0
            }
            guard same else { return outcome(.badSignature, .messageDigestMismatch, entry) }
            guard attrs.count >= 2 else { return outcome(.badSignature, .signatureMismatch, entry) }
            // The signature covers the DER SET OF attributes: the same bytes with the [0] IMPLICIT tag (0xA0)
            // replaced by SET (0x31). Feeding the new tag byte and then the rest is the same as hashing a
            // re-tagged copy, without the copy.
            var setTag: UInt8 = 0x31
            let rest = UnsafeRawBufferPointer(rebasing: der[(attrs.lowerBound + 1)..<attrs.upperBound])
            let ok = Swift.withUnsafeBytes(of: &setTag) { tag in
                digest.withUnsafeMutableBytes { out in DigestEngine.digest(md, parts: tag, rest, into: out) }
            }
            guard ok else { return outcome(.badSignature, .signatureMismatch, entry) }
        }

        // RSA PKCS #1 v1.5: the DigestInfo inside the signature must name `md` and hold `digest`.
        let signature = UnsafeRawBufferPointer(rebasing: der[container.signature])
        let verified = digest.withUnsafeBytes { d -> Bool in
            // d holds 32 bytes; md.size (20 or 32) of them are the digest.
            pkcs1.verify(
                key, signature: signature, digest: UnsafeRawBufferPointer(rebasing: d[0..<md.size]), algorithm: alg)
        }
        guard verified else { return outcome(.badSignature, .signatureMismatch, entry) }

        // The chain (cached verdict), then every certificate's validity at the creation date (per receipt).
        switch entry.verdict {
        case .trusted: break
        case .untrusted: return outcome(.untrustedChain, .chain, entry)
        case .policy: return outcome(.certificatePolicy, .chain, entry)
        }
        guard let validationTime else { return outcome(.malformedAttribute, .missingCreationDate, entry) }
        if validationTime > entry.validUntil { return outcome(.certificateExpired, .expired, entry) }
        if validationTime < entry.validFrom { return outcome(.certificateNotYetValid, .notYetValid, entry) }
        return outcome(nil, .none, entry)
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
