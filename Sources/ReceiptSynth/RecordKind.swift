/// What the generator made a record as, and what `receiptflow export --trust-anchor <test root>` must say about it
/// with default options. The raw value is the `kind` field of the truth file.
public enum RecordKind: String, Sendable, CaseIterable {
    case valid
    // Lines a reader rejects before any receipt is decoded.
    case invalidJSON = "invalid-json"
    case missingKey = "missing-key"
    case emptyReceipt = "empty-receipt"
    case invalidBase64 = "invalid-base64"
    case oversizedLine = "oversized-line"
    // Bytes that are not a receipt.
    case truncatedDER = "truncated-der"
    case garbageDER = "garbage-der"
    // Receipts that decode but do not authenticate.
    case tamperedPayload = "tampered-payload"
    case flippedSignature = "flipped-signature"
    case signerNotFound = "signer-not-found"
    case foreignCA = "foreign-ca"
    case impostorCA = "impostor-ca"
    case developerLeaf = "developer-leaf"
    case intermediateWithoutPolicy = "intermediate-without-policy"
    case intermediateWithoutCA = "intermediate-without-ca"
    case expiredLeaf = "expired-leaf"
    case notYetValidLeaf = "not-yet-valid-leaf"

    /// The bad kinds, in the order of `badWeights`.
    public static let bad: [RecordKind] = allCases.filter { $0 != .valid }

    /// Relative frequency among bad records. Oversized lines are rarer: each is over 1 MiB uncompressed.
    static let badWeights: [Double] = bad.map { k in
        switch k {
        case .oversizedLine: return 0.5
        case .emptyReceipt: return 0.5
        default: return 1
        }
    }

    /// The expected `error_code` (contract.md), nil for valid records.
    public var errorCode: String? {
        switch self {
        case .valid: return nil
        case .invalidJSON: return "invalid_json"
        case .missingKey: return "missing_field"
        case .emptyReceipt: return "empty_receipt"
        case .invalidBase64: return "invalid_base64"
        case .oversizedLine: return "record_too_large"
        case .truncatedDER, .garbageDER: return "malformed_der"
        case .tamperedPayload, .flippedSignature: return "bad_signature"
        case .signerNotFound: return "signer_not_found"
        case .foreignCA, .impostorCA: return "untrusted_chain"
        case .developerLeaf, .intermediateWithoutPolicy, .intermediateWithoutCA: return "certificate_policy"
        case .expiredLeaf: return "certificate_expired"
        case .notYetValidLeaf: return "certificate_not_yet_valid"
        }
    }

    /// The expected `status`.
    public var status: Int {
        switch self {
        case .valid: return 0
        case .invalidJSON, .missingKey, .emptyReceipt, .invalidBase64, .oversizedLine, .truncatedDER, .garbageDER,
            .signerNotFound:
            return 21002
        default: return 21003
        }
    }

    /// The signing chain for kinds that are signed receipts.
    var variant: TestPKI.Variant {
        switch self {
        case .foreignCA: return .foreignCA
        case .impostorCA: return .impostor
        case .developerLeaf: return .developerLeaf
        case .intermediateWithoutPolicy: return .intermediateWithoutPolicy
        case .intermediateWithoutCA: return .intermediateWithoutCA
        case .expiredLeaf: return .expiredLeaf
        case .notYetValidLeaf: return .notYetValidLeaf
        default: return .valid
        }
    }

    /// True when the receipt's fields decode (the truth then carries them although the record is rejected).
    var decodes: Bool {
        switch self {
        case .invalidJSON, .missingKey, .emptyReceipt, .invalidBase64, .oversizedLine, .truncatedDER, .garbageDER:
            return false
        default: return true
        }
    }
}
