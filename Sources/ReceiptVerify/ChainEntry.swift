import COpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The verdict on a chain, independent of any receipt's date.
enum ChainVerdict: Sendable {
    /// The signer chains to a configured anchor and meets Apple's policy (or is itself an anchor).
    case trusted
    /// No path to an anchor, or a signature in the path fails (`untrusted_chain`).
    case untrusted(String)
    /// A certificate lacks Apple's extension OID or CA rights (`certificate_policy`).
    case policy(String)
    /// A certificate's key is of a kind no Apple certificate has (`unsupported_algorithm`), refused before any
    /// signature over or by it is checked (`KeyShape`).
    case refusedKey(String)

    var sentence: String {
        switch self {
        case .trusted: return "the chain is trusted"
        case .untrusted(let s), .policy(let s), .refusedKey(let s): return s
        }
    }
}

/// When one certificate of the chain is valid (epoch ms), and its subject for messages.
struct CertificateWindow: Sendable {
    var notBefore: Int64
    var notAfter: Int64
    var subject: String
}

/// Everything learnt once about one set of embedded certificates and one signer identifier, shared by every
/// receipt that carries the same bytes. Immutable after creation, so threads read it without locks.
final class ChainEntry: @unchecked Sendable {
    /// Unique per entry for the life of the process (per-thread key contexts are keyed by it).
    let id: UInt64
    /// The cache key (`ChainKey`) of these certificates and signer identifier.
    let key: SHA256Digest

    // The key: the embedded certificates' bytes and the SignerInfo's issuer and serial, compared exactly.
    let certificateBytes: [UInt8]
    /// End offset of each certificate within `certificateBytes`.
    let certificateEnds: [Int]
    let sidIssuer: [UInt8]
    let sidSerial: [UInt8]

    /// Index of the signer among the embedded certificates; `nil` when none matches (signer_not_found).
    let signerIndex: Int?
    let signerSHA256: String?
    /// The signer's public key when it is RSA (owned; freed in deinit). Shared read-only across threads.
    let publicKey: OpaquePointer?
    let verdict: ChainVerdict
    /// The validity of every certificate of the verified chain, leaf first (only the leaf when untrusted).
    let windows: [CertificateWindow]
    /// The facts the trust policies judge: the verdict and `windows` as `VerifiedChain`.
    let chain: VerifiedChain

    init(
        id: UInt64, key: SHA256Digest, certificateBytes: [UInt8], certificateEnds: [Int],
        sidIssuer: [UInt8],
        sidSerial: [UInt8], signerIndex: Int?, signerSHA256: String?, publicKey: OpaquePointer?,
        verdict: ChainVerdict, windows: [CertificateWindow]
    ) {
        self.id = id
        self.key = key
        self.certificateBytes = certificateBytes
        self.certificateEnds = certificateEnds
        self.sidIssuer = sidIssuer
        self.sidSerial = sidSerial
        self.signerIndex = signerIndex
        self.signerSHA256 = signerSHA256
        self.publicKey = publicKey
        self.verdict = verdict
        self.windows = windows
        self.chain = VerifiedChain(verdict, windows: windows)
    }

    deinit {
        if let publicKey { EVP_PKEY_free(publicKey) }
    }

    var certificateCount: Int { certificateEnds.count }

    /// True when `der`'s certificates (at `certificates`) and signer identifier are byte-identical to this key.
    /// No allocation: lengths first, then memcmp.
    func matches(
        _ der: UnsafeRawBufferPointer, certificates: [Range<Int>], issuer: Range<Int>, serial: Range<Int>
    ) -> Bool {
        guard certificates.count == certificateEnds.count, issuer.count == sidIssuer.count,
            serial.count == sidSerial.count
        else { return false }
        guard let base = der.baseAddress else { return certificates.isEmpty && issuer.isEmpty && serial.isEmpty }
        return certificateBytes.withUnsafeBytes { own -> Bool in
            var start = 0
            for (i, r) in certificates.enumerated() {
                let end = certificateEnds[i]
                guard r.count == end - start else { return false }
                // The caller checked every range lies inside `der`; `own` holds exactly these lengths.
                if r.count > 0, memcmp(base + r.lowerBound, own.baseAddress! + start, r.count) != 0 { return false }
                start = end
            }
            return Self.equal(base, issuer, sidIssuer) && Self.equal(base, serial, sidSerial)
        }
    }

    private static func equal(_ base: UnsafeRawPointer, _ r: Range<Int>, _ bytes: [UInt8]) -> Bool {
        guard r.count > 0 else { return bytes.isEmpty }
        return bytes.withUnsafeBytes { memcmp(base + r.lowerBound, $0.baseAddress!, r.count) == 0 }
    }
}

/// The chain cache's key: the SHA-256 (by OpenSSL) of every embedded certificate and of the signer identifier,
/// each framed by its length. Covers every byte, so two chains share a key only if their bytes are the same.
enum ChainKey {
    /// The caller checked that every range lies inside `der`.
    static func digest(
        _ der: UnsafeRawBufferPointer, certificates: [Range<Int>], issuer: Range<Int>, serial: Range<Int>,
        hasher: ContentHasher
    ) -> SHA256Digest {
        hasher.sha256 { feed in
            for r in certificates { feed(UnsafeRawBufferPointer(rebasing: der[r])) }
            feed(UnsafeRawBufferPointer(rebasing: der[issuer]))
            feed(UnsafeRawBufferPointer(rebasing: der[serial]))
        }
    }
}
