/// The verifyReceipt-compatible status of one input record.
///
/// Only the statuses a local validator can reproduce exist here; the rest describe Apple's server.
public enum ReceiptStatus: Int32, Sendable, CaseIterable {
    case valid = 0
    case malformed = 21002
    case notAuthenticated = 21003
    case sandboxReceiptInProduction = 21007
    case productionReceiptInSandbox = 21008
}

/// A stable snake_case reason for a rejected record (`error_code` in every output).
///
/// Codes are never reused for another meaning; new reasons get new codes (contract.md).
public enum ErrorCode: String, Sendable, CaseIterable, Hashable {
    // 21002: the record could not be read as a receipt.
    case invalidJSON = "invalid_json"
    case missingField = "missing_field"
    case emptyReceipt = "empty_receipt"
    case invalidBase64 = "invalid_base64"
    /// The receipt field holds a StoreKit 2 JWS (signed transaction or notification), not a PKCS #7 receipt.
    case jwsNotReceipt = "jws_not_receipt"
    case recordTooLarge = "record_too_large"
    case malformedDER = "malformed_der"
    /// A receipt attribute whose value cannot be read (an unparseable date, an integer that overflows 64 bits).
    case malformedAttribute = "malformed_attribute"
    /// The receipt exceeds a resource limit (nesting depth, attribute count, in-app entries).
    case limitExceeded = "limit_exceeded"
    case signerNotFound = "signer_not_found"
    /// The `--device-id-field` value is present but not a UUID, a MAC address or 12 or 32 hex digits.
    case invalidDeviceID = "invalid_device_id"
    /// A StoreKit 2 JWS that is not a well-formed compact JWS with a JSON header and payload.
    case jwsMalformed = "jws_malformed"
    // 21003: the receipt could not be authenticated.
    case unsupportedAlgorithm = "unsupported_algorithm"
    case badSignature = "bad_signature"
    case untrustedChain = "untrusted_chain"
    case certificatePolicy = "certificate_policy"
    case certificateExpired = "certificate_expired"
    case certificateNotYetValid = "certificate_not_yet_valid"
    case wrongBundleID = "wrong_bundle_id"
    /// `--app-version`: the receipt is for another version of the app.
    case wrongAppVersion = "wrong_app_version"
    /// `--require-device-match`: the receipt's hash (attribute 5) is not that of the record's device identifier.
    case deviceMismatch = "device_mismatch"
    // 21007 / 21008
    case wrongEnvironment = "wrong_environment"
    // 21002, listed last so that the earlier codes keep their positions.
    /// A row of a CSV input with another number of fields than its header, or a malformed quote.
    case invalidCSV = "invalid_csv"

    /// The status this code reports, except `wrongEnvironment`, whose status depends on the direction.
    public var status: ReceiptStatus {
        switch self {
        case .invalidJSON, .missingField, .emptyReceipt, .invalidBase64, .jwsNotReceipt, .recordTooLarge,
            .malformedDER, .malformedAttribute, .limitExceeded, .signerNotFound, .invalidDeviceID, .jwsMalformed,
            .invalidCSV:
            return .malformed
        case .unsupportedAlgorithm, .badSignature, .untrustedChain, .certificatePolicy, .certificateExpired,
            .certificateNotYetValid, .wrongBundleID, .wrongAppVersion, .deviceMismatch:
            return .notAuthenticated
        case .wrongEnvironment:
            return .sandboxReceiptInProduction
        }
    }
}

/// A cheap, allocation-free error value: a code plus where it happened. Text is rendered only at the edge.
public struct ReceiptError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    /// Byte offset in the decoded receipt (or input line) where the problem was found; -1 when not applicable.
    public var offset: Int
    /// A static reason; never built per record.
    public var reason: StaticString

    public init(_ code: ErrorCode, at offset: Int = -1, _ reason: StaticString = "") {
        self.code = code
        self.offset = offset
        self.reason = reason
    }

    public static func == (a: ReceiptError, b: ReceiptError) -> Bool { a.code == b.code && a.offset == b.offset }
    public func hash(into h: inout Hasher) {
        h.combine(code)
        h.combine(offset)
    }

    /// One human sentence, for `error_detail`.
    public var description: String {
        let r = "\(reason)"
        var s = r.isEmpty ? String(code.rawValue.map { $0 == "_" ? " " : $0 }) : r
        if offset >= 0 { s += " (at byte \(offset))" }
        return s
    }
}
