import ReceiptModel

/// What to try when most records of a run were rejected for one reason that usually has one cause (the test CA's
/// root not given, the receipt under another key, a file that is not NDJSON): a sentence for the end of the run,
/// or nil when no reason covers more than half of the records or the reason has no likely cause.
public struct RejectionHint: Sendable, Equatable {
    /// The error code shared by most records, and how many records it covers.
    public var code: ErrorCode
    public var count: Int
    public var records: Int
    /// The sentence: what most records have in common and what to try.
    public var text: String

    /// What the run was given that the hints refer to.
    public struct Options: Sendable, Equatable {
        /// Signatures were checked (not `--no-verify`).
        public var verify = true
        /// `--trust-anchor` was given (otherwise Apple's built-in roots were trusted).
        public var trustAnchorsGiven = false
        /// `--field NAME`, when given.
        public var field: String? = nil
        public init(verify: Bool = true, trustAnchorsGiven: Bool = false, field: String? = nil) {
            self.verify = verify
            self.trustAnchorsGiven = trustAnchorsGiven
            self.field = field
        }
    }

    /// The hint for counts `c`, or nil.
    public static func of(_ c: BatchCounts, _ o: Options) -> RejectionHint? {
        guard c.records > 0 else { return nil }
        var top: (code: ErrorCode, count: Int)? = nil
        for (i, code) in ErrorCode.allCases.enumerated() where c.byCode[i] > (top?.count ?? 0) {
            top = (code, c.byCode[i])
        }
        guard let (code, n) = top, n * 2 > c.records, let advice = advice(code, o) else { return nil }
        let share =
            n == 1
            ? "the only record was" : n == c.records ? "all \(n) records were" : "\(n) of \(c.records) records were"
        let text = "\(share) rejected as \(code.rawValue): " + advice
        return RejectionHint(code: code, count: n, records: c.records, text: text)
    }

    /// How to turn the usual other shapes into input that export reads.
    static let convert =
        "a JSON array or pretty-printed JSON must become one object per line first (jq -c '.[]' FILE.json > "
        + "FILE.ndjson), and a CSV file needs a header line naming its receipt column (receipt_data, or any name "
        + "with --field NAME)"

    /// The likely cause of `code` and what to try; nil for reasons that are about the data itself.
    static func advice(_ code: ErrorCode, _ o: Options) -> String? {
        switch code {
        case .untrustedChain where o.verify && !o.trustAnchorsGiven:
            return "their certificate chains do not end at Apple's roots, the only ones trusted without "
                + "--trust-anchor. Data signed by a test CA needs its root: --trust-anchor data/test-root.pem "
                + "(and data/test-jws-root.pem for JWS) for the samples, DIR/root.pem (DIR/jws-root.pem) for "
                + "`receiptflow generate --ca-dir DIR`, the StoreKit certificate for Xcode receipts"
        case .untrustedChain where o.verify:
            return "their certificate chains do not end at the --trust-anchor certificates given. Check that they "
                + "are this data's roots; Apple's receipts and JWS verify against the built-in roots (leave out "
                + "--trust-anchor)"
        case .missingField:
            let key = o.field.map { "'\($0)'" } ?? "'receipt-data', 'receipt_data' or 'receipt'"
            return "their JSON objects have no receipt under \(key) at the top level. Name the key that holds "
                + "the receipt with --field NAME"
        case .invalidJSON:
            return "their lines are not JSON objects. export reads NDJSON (one JSON object per line) or one base64 "
                + "receipt per line: " + convert
        case .invalidBase64:
            return "their lines were read as one base64 receipt each (the input's first line is not a JSON object) "
                + "and are not base64. " + convert
        case .invalidCSV:
            return "their CSV rows do not have as many fields as the header, or quote a field wrongly. Fields that "
                + "hold commas, quotes or line breaks must be quoted, a quote inside one doubled (RFC 4180)"
        case .recordTooLarge:
            return "their lines are longer than --max-record-size. Raise it if the records are that large"
        case .wrongBundleID:
            return "they are receipts of other apps than --bundle-id names. Check the bundle ids given"
        case .wrongAppVersion:
            return "they are receipts of other versions than --app-version names. Check the versions given"
        case .wrongEnvironment:
            return "they come from the other environment than --environment requires. Check that option"
        default:
            return nil
        }
    }
}
