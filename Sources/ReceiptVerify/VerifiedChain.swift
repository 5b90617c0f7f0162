import ReceiptModel

/// What chain verification established about a record's certificates (OpenSSL built and checked the chain to a
/// configured anchor; `ChainBuilder` read Apple's OIDs and every certificate's validity), for the trust policies to
/// judge. Made once per distinct chain and shared by every record that carries it.
public struct VerifiedChain: Sendable {
    /// Why the chain does not end at a configured trust anchor; nil when it does.
    public let anchorFailure: String?
    /// Why a certificate of the chain lacks Apple's certificate-policy OIDs (or CA rights); nil when none does, or
    /// when the chain was not anchored and so not examined.
    public let policyFailure: String?
    /// The intersection of the certificates' validity (epoch ms): a record signed outside it is judged expired or
    /// not yet valid.
    public let validFrom: Int64
    public let validUntil: Int64
    /// Every certificate's validity, leaf first, to name the one at fault.
    let windows: [CertificateWindow]

    /// True when the chain ends at a configured anchor.
    public var anchored: Bool { anchorFailure == nil }
    /// True when every certificate carries Apple's OIDs (false only for an anchored chain that does not).
    public var policyOIDsOK: Bool { policyFailure == nil }

    /// A key refused before the chain was built (`refusedKey`) leaves the chain unanchored: the verifier rejects
    /// such a record as `unsupported_algorithm` before any policy reads these facts.
    init(_ verdict: ChainVerdict, windows: [CertificateWindow]) {
        switch verdict {
        case .trusted: (anchorFailure, policyFailure) = (nil, nil)
        case .untrusted(let why), .refusedKey(let why): (anchorFailure, policyFailure) = (why, nil)
        case .policy(let why): (anchorFailure, policyFailure) = (nil, why)
        }
        self.windows = windows
        validFrom = windows.map(\.notBefore).max() ?? Int64.min
        validUntil = windows.map(\.notAfter).min() ?? Int64.max
    }
}

/// The facts the trust policies read of one record: its chain's, and the time it was signed at (a receipt's
/// creation date or the run's validation time, a JWS's `signedDate` or an app transaction's
/// `receiptCreationDate`), with the name details give that time.
public struct TrustFacts: Sendable {
    public let chain: VerifiedChain
    /// Epoch milliseconds; nil when the record has no time to judge its certificates at.
    public let signedAt: Int64?
    /// How details name the signing time ("the receipt creation date", "the JWS's signedDate").
    public let timeName: String

    public init(chain: VerifiedChain, signedAt: Int64?, timeName: String) {
        self.chain = chain
        self.signedAt = signedAt
        self.timeName = timeName
    }

    /// True when the chain is anchored and meets Apple's OIDs: the signature is worth checking.
    var chainHolds: Bool { chain.anchored && chain.policyOIDsOK }

    /// True when, besides, every certificate was valid at the signing time.
    var allHold: Bool {
        guard chainHolds, let t = signedAt else { return false }
        return t >= chain.validFrom && t <= chain.validUntil
    }
}
