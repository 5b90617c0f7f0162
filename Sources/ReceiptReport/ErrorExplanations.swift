import ReceiptModel

/// What each error code means and what its owner can do about it, in words for the person reading a report.
/// The switch is exhaustive: a new `ErrorCode` does not compile until it is explained here.
public enum ErrorExplanations {
    /// One code's meaning and the suggested action.
    public struct Explanation: Sendable, Equatable {
        public var meaning: String
        public var action: String
    }

    public static func explain(_ code: ErrorCode) -> Explanation {
        switch code {
        case .invalidJSON:
            return .init(
                meaning: "The input line is not a JSON object.",
                action:
                    "Check the export format: one JSON object (or one base64 receipt) per line. A CSV file or one "
                    + "JSON array is not read as lines.")
        case .missingField:
            return .init(
                meaning: "The JSON object has no receipt under the expected key, or it is null or not a string.",
                action: "Give the key that holds the receipt with --field NAME.")
        case .emptyReceipt:
            return .init(
                meaning: "The receipt string is empty.",
                action: "These records hold no receipt: check how the archive was exported; nothing can be recovered.")
        case .invalidBase64:
            return .init(
                meaning: "The receipt string is not base64.",
                action: "Check that the archive stores the base64 text as the app sent it (not escaped or truncated).")
        case .jwsNotReceipt:
            return .init(
                meaning: "A StoreKit 2 JWS stood where a receipt was expected.",
                action: "Nothing: such records are read as JWS. The code stays listed for older runs.")
        case .recordTooLarge:
            return .init(
                meaning: "The input line is longer than --max-record-size.",
                action: "If the records are genuine, raise --max-record-size; otherwise the line is not a receipt.")
        case .malformedDER:
            return .init(
                meaning: "The bytes are not a well-formed PKCS #7 receipt (truncated, garbage or another content).",
                action: "Check for truncation in the archive; such receipts cannot be validated.")
        case .malformedAttribute:
            return .init(
                meaning: "A receipt attribute cannot be read (a bad date, an integer too large, text that is not "
                    + "UTF-8), or there is no creation date to judge the certificates at.",
                action: "These receipts are damaged or forged; keep them out of revenue figures.")
        case .limitExceeded:
            return .init(
                meaning: "The receipt exceeds a resource limit (nesting, attribute count, in-app entries or size).",
                action: "Genuine receipts stay far below the limits: treat these as hostile input.")
        case .signerNotFound:
            return .init(
                meaning: "The signature names no certificate that the receipt carries.",
                action: "The receipt was altered or is not an App Store receipt.")
        case .invalidDeviceID:
            return .init(
                meaning: "The --device-id-field value is not a UUID, a MAC address or 12 or 32 hex digits.",
                action: "Check which field holds the device identifier, and its format.")
        case .jwsMalformed:
            return .init(
                meaning: "A StoreKit 2 JWS that cannot be read (not three base64url parts, no JSON header or "
                    + "payload, no signedDate).",
                action: "Check that the archive stores the whole signed JWS text.")
        case .invalidCSV:
            return .init(
                meaning: "A row of a CSV input has another number of fields than its header, or a malformed quote.",
                action: "Check how the table was exported: each row one record, fields with commas, quotes or line "
                    + "breaks quoted (RFC 4180).")
        case .unsupportedAlgorithm:
            return .init(
                meaning: "A digest or signature algorithm the App Store does not use.",
                action: "The record was not signed by the App Store; exclude it.")
        case .badSignature:
            return .init(
                meaning: "The signature does not match the signed content: the record was changed after signing.",
                action: "Exclude it: the content cannot be trusted.")
        case .untrustedChain:
            return .init(
                meaning: "The certificate chain does not end at a trust anchor of this run.",
                action:
                    "If most records have it, the trust anchors are likely wrong: test or sandbox data needs its own "
                    + "root (--trust-anchor PATH). Otherwise the records were not signed by Apple.")
        case .certificatePolicy:
            return .init(
                meaning: "A certificate lacks Apple's receipt-signing policy or CA rights where required.",
                action: "The record was signed by a certificate not made for App Store receipts; exclude it.")
        case .certificateExpired:
            return .init(
                meaning: "A certificate of the chain had expired at the record's creation date.",
                action: "Check the creation dates; a receipt signed after its certificate expired is not genuine.")
        case .certificateNotYetValid:
            return .init(
                meaning: "A certificate of the chain was not yet valid at the record's creation date.",
                action: "A backdated creation date: treat the record as forged.")
        case .wrongBundleID:
            return .init(
                meaning: "The record belongs to another app than --bundle-id allows.",
                action: "Add the app with another --bundle-id if it belongs to the migration.")
        case .wrongAppVersion:
            return .init(
                meaning: "The receipt is for another application version than --app-version allows (or none).",
                action: "Add the version with another --app-version if it is expected.")
        case .deviceMismatch:
            return .init(
                meaning: "The receipt's device hash is not that of the record's device (--require-device-match).",
                action: "The receipt was made on another device: check the device identifier field, or drop "
                    + "--require-device-match.")
        case .wrongEnvironment:
            return .init(
                meaning: "The record is from the other environment than --environment requires (sandbox against "
                    + "production or the reverse).",
                action: "Expected when test purchases are in the archive; use --environment any to keep both.")
        }
    }
}
