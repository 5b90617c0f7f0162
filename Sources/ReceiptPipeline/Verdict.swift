import ReceiptModel

/// The outcome of evaluating one record: its status and reason, whether its signature verified, its signer, and
/// what the checks found. The first rejection wins; later checks still run but cannot replace it.
public struct Verdict: Sendable {
    public private(set) var status = ReceiptStatus.valid
    /// Why the record was rejected; nil when it is valid.
    public private(set) var code: ErrorCode? = nil
    /// The specific reason behind `code`.
    public private(set) var detail = Detail.none
    /// True when the signature, chain and certificate dates all passed (never with `--no-verify`).
    public var verified = false
    /// Lowercase hex SHA-256 of the signing certificate, when it was found.
    public var signer: String? = nil
    /// The time the certificates were judged at (epoch ms), when they were judged.
    public var validationTime: Int64? = nil
    /// Whether the receipt's hash is that of the record's device identifier (`DeviceHashPolicy`); nil when
    /// unchecked (no device identifier, or no hash in the receipt).
    public var deviceHashMatches: Bool? = nil

    public init() {}

    /// A verdict for a record rejected with `code` before any check ran.
    public init(rejected code: ErrorCode, _ detail: Detail) {
        reject(code, code.status, detail)
    }

    /// Rejects the record, unless an earlier check already did.
    public mutating func reject(_ c: ErrorCode, _ s: ReceiptStatus, _ d: Detail) {
        guard code == nil else { return }
        code = c
        status = s
        detail = d
        verified = false
    }

    /// Fails closed, for receipts and JWS alike: when the run verifies, a record whose signature was left unchecked
    /// (its chain fails the trust policies) is rejected even by a policy list without trust policies, unless a
    /// policy rejected it already.
    mutating func failClosed(verifying: Bool, signatureVerified: Bool) {
        if verifying, code == nil, !signatureVerified {
            reject(.untrustedChain, .notAuthenticated, .text(Self.unchecked, at: -1))
        }
    }

    /// The detail of a record whose signature was left unchecked (its chain fails) and that no policy rejected.
    static let unchecked: StaticString = "the signature was not checked: the chain fails its trust policies"
}
