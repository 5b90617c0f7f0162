import ReceiptDER
import ReceiptModel

/// The verdict on one receipt's authenticity: a code (nil when verified), the signer's fingerprint when the
/// signer was found, and a human sentence built only when someone reads `detail`.
public struct VerifyOutcome: Sendable {
    /// Why the receipt was rejected; `nil` when signature, chain, policy and validity all passed.
    public let error: ErrorCode?
    /// Lowercase hex SHA-256 of the signing certificate, when it was found among the embedded certificates
    /// (also on failure). Shared with the cache entry: reading it does not allocate.
    public let signerSHA256: String?
    /// The SignerInfo's digest algorithm.
    public let digestAlgorithm: DigestAlgorithm
    /// The validation time the verdict was reached at (epoch ms), or nil when there was none: the receipt had no
    /// creation date to judge its certificates at.
    public let validationTime: Int64?

    /// What the trust policies judge of this receipt (its chain and signing time); nil when verification stopped
    /// before the chain was known.
    public let trust: TrustFacts?
    /// True when the RSA signature was checked and matched. False also when it was not checked because the chain
    /// is known to fail its trust policies (`ReceiptVerifier.establish` leaves that to them).
    public let signatureVerified: Bool

    let reason: Reason
    let entry: ChainEntry?

    init(
        _ error: ErrorCode?, _ reason: Reason, entry: ChainEntry?, digest: DigestAlgorithm, time: Int64?,
        trust: TrustFacts? = nil, signatureVerified: Bool = false
    ) {
        self.error = error
        self.reason = reason
        self.entry = entry
        self.signerSHA256 = entry?.signerSHA256
        self.digestAlgorithm = digest
        self.validationTime = time
        self.trust = trust
        self.signatureVerified = signatureVerified
    }

    /// True when the receipt is authentic at its creation date (on an outcome of `establish`, before the trust
    /// policies judged it: only that nothing the receipt's bytes decide failed and the signature matched).
    public var verified: Bool { error == nil && signatureVerified }

    /// This outcome once `policies` have judged its trust facts: the first failure becomes its error. An outcome
    /// already rejected stays as it is; one whose signature was not checked is never left verified.
    func judged(by policies: [any TrustPolicy]) -> VerifyOutcome {
        guard error == nil, let trust else { return self }
        func rejected(_ code: ErrorCode, _ reason: Reason) -> VerifyOutcome {
            VerifyOutcome(
                code, reason, entry: entry, digest: digestAlgorithm, time: validationTime, trust: trust,
                signatureVerified: signatureVerified)
        }
        if let failure = policies.judge(trust) { return rejected(failure.code, Reason(failure.kind)) }
        return signatureVerified ? self : rejected(.untrustedChain, .chain)
    }

    /// The verifyReceipt status for this outcome.
    public var status: ReceiptStatus { error?.status ?? .valid }

    /// Why the check failed, as a specific detail; `nil` when verified. Builds a String on each read.
    public var detail: String? { detail(timeName: "the receipt creation date") }

    /// The same detail, naming the validation time `timeName` in date-related sentences: callers that judged the
    /// receipt at another time than its creation date (`inspect --at`) say so.
    public func detail(timeName: String) -> String? {
        guard error != nil else { return nil }
        return reason.sentence(entry: entry, time: validationTime, timeName: timeName)
    }

    /// The specific cause behind `error`.
    enum Reason: Sendable {
        case none
        case malformedRanges
        case missingCreationDate
        case signerNotFound
        case unsupportedDigest
        case unsupportedSignatureAlgorithm
        case unsupportedKey
        case digestAlgorithmMismatch
        case missingMessageDigest
        case messageDigestMismatch
        case signatureMismatch
        case chain
        case expired
        case notYetValid

        /// The reason behind a trust policy's failure.
        init(_ kind: TrustFailure.Kind) {
            switch kind {
            case .untrusted, .policy: self = .chain
            case .expired: self = .expired
            case .notYetValid: self = .notYetValid
            case .noSigningTime: self = .missingCreationDate
            }
        }

        func sentence(entry: ChainEntry?, time: Int64?, timeName: String) -> String {
            switch self {
            case .none:
                return "the receipt verified"
            case .malformedRanges:
                return "the container's parts lie outside the receipt bytes"
            case .missingCreationDate:
                return trustSentence(.noSigningTime)
            case .signerNotFound:
                return "the SignerInfo's issuer and serial number match none of the \(entry?.certificateCount ?? 0) "
                    + "embedded certificates"
            case .unsupportedDigest:
                return "the SignerInfo uses a digest algorithm other than SHA-1 or SHA-256"
            case .unsupportedSignatureAlgorithm:
                return "the SignerInfo's signature algorithm is not RSA with its digest algorithm"
            case .unsupportedKey:
                return "the signing certificate's key is not RSA"
            case .digestAlgorithmMismatch:
                return "the SignerInfo's digest algorithm is not listed in the SignedData digestAlgorithms"
            case .missingMessageDigest:
                return "the signed attributes carry no messageDigest"
            case .messageDigestMismatch:
                return "the messageDigest signed attribute does not match the digest of the receipt content"
            case .signatureMismatch:
                return "the RSA signature does not match the receipt content"
            case .chain:
                return entry?.verdict.sentence ?? "the certificate chain could not be verified"
            case .expired:
                return trustSentence(.expired)
            case .notYetValid:
                return trustSentence(.notYetValid)
            }

            func trustSentence(_ kind: TrustFailure.Kind) -> String {
                let chain = entry?.chain ?? VerifiedChain(.untrusted(""), windows: [])
                return TrustFailure(kind).sentence(TrustFacts(chain: chain, signedAt: time, timeName: timeName))
            }
        }
    }
}

/// UTC rendering of epoch milliseconds for messages (no Foundation).
enum UTCText {
    static func iso(_ ms: Int64) -> String {
        let secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        var days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400
        let rem = secs - days * 86400
        // Civil-from-days (proleptic Gregorian), valid far beyond any certificate date.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))T\(two(rem / 3600)):\(two(rem / 60 % 60)):\(two(rem % 60))Z"
    }
}
