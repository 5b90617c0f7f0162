import ReceiptModel

/// A check on the trust the verifier established for a record (`TrustFacts`), in the manner of swift-certificates'
/// `VerifierPolicy`: it reads the facts and returns why they fail, or nil. Receipts and JWS are judged by the same
/// values, at the head of the run's policy list, so the same facts get the same code whatever the generation.
/// The verifiers compute (OpenSSL verifies signatures and builds chains); these only judge. They must not allocate.
public protocol TrustPolicy: Sendable {
    func judge(_ facts: TrustFacts) -> TrustFailure?
}

/// Why a record's trust facts fail a `TrustPolicy`: a code, and a sentence built only when asked for.
public struct TrustFailure: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The chain does not end at a configured anchor (`untrusted_chain`).
        case untrusted
        /// A certificate lacks Apple's OIDs (`certificate_policy`).
        case policy
        /// A certificate had expired at the signing time (`certificate_expired`).
        case expired
        /// A certificate was not yet valid at the signing time (`certificate_not_yet_valid`).
        case notYetValid
        /// The record has no time to judge its certificates at (`malformed_attribute`).
        case noSigningTime
    }

    public let kind: Kind

    public init(_ kind: Kind) { self.kind = kind }

    public var code: ErrorCode {
        switch kind {
        case .untrusted: return .untrustedChain
        case .policy: return .certificatePolicy
        case .expired: return .certificateExpired
        case .notYetValid: return .certificateNotYetValid
        case .noSigningTime: return .malformedAttribute
        }
    }

    /// The detail for a record with `facts` (allocates; read only for rejected records).
    public func sentence(_ facts: TrustFacts) -> String {
        let chain = facts.chain
        let name = facts.timeName
        switch kind {
        case .untrusted:
            return chain.anchorFailure ?? "the certificate chain could not be verified"
        case .policy:
            return chain.policyFailure ?? "the certificate chain could not be verified"
        case .expired:
            guard let time = facts.signedAt, let w = chain.windows.first(where: { time > $0.notAfter }) else {
                return "a certificate of the chain had expired at \(name)"
            }
            return "certificate \(w.subject) expired at \(UTCText.iso(w.notAfter)), before \(name) "
                + UTCText.iso(time)
        case .notYetValid:
            guard let time = facts.signedAt, let w = chain.windows.first(where: { time < $0.notBefore }) else {
                return "a certificate of the chain was not yet valid at \(name)"
            }
            return "certificate \(w.subject) is valid only from \(UTCText.iso(w.notBefore)), after \(name) "
                + UTCText.iso(time)
        case .noSigningTime:
            return "the receipt has no creation date (attribute 12), the time its certificates must be valid at"
        }
    }
}

/// The trust policies every verified record goes through, in order: the chain ends at an anchor, it carries
/// Apple's OIDs, and its certificates were valid at the record's own signing time.
public enum TrustPolicies {
    public static let standard: [any TrustPolicy] = [
        TrustedChainPolicy(), ApplePolicyOIDsPolicy(), ValidAtSigningTimePolicy(),
    ]
}

extension Array where Element == any TrustPolicy {
    /// The first failure of `facts` in the list's order, or nil when every policy passes.
    public func judge(_ facts: TrustFacts) -> TrustFailure? {
        for policy in self {
            if let failure = policy.judge(facts) { return failure }
        }
        return nil
    }
}
