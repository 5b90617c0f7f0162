import ReceiptModel

/// Renders one record as an object shaped like verifyReceipt's response body (receipt-format.md section 6), for
/// `--format ndjson` and `receiptflow inspect`.
///
/// Key order follows Apple's: `status`, `environment`, `receipt` (`receipt_type`, `adam_id`, `app_item_id`,
/// `bundle_id`, `application_version`, `download_id`, `version_external_identifier`, `receipt_creation_date*`,
/// `original_purchase_date*`, `original_application_version`, `expiration_date*` when present, `in_app`), then this
/// tool's `source`, `line`, `record_id`, and `error_code`/`error_detail` on failure. Every date appears as `x`
/// (`2020-11-30 04:02:18 Etc/GMT`), `x_ms` (a string) and `x_pst` (Los Angeles time); in-app numbers and booleans
/// are strings as Apple wrote them, app-level ids are exact JSON integers. Server-only keys (`request_date*`,
/// `latest_receipt*`, ...) cannot be known locally and are not written.
///
/// Attribute 21 is rendered as `expiration_date*`, the name in Apple's documentation and in receipt-format.md's
/// attribute table (section 6 of that document calls it `receipt_expiration_date`).
public enum VerifyReceiptJSON {
    /// Where a record came from; rendered after the receipt.
    public struct Record: Sendable {
        public var source: String
        public var line: Int64
        public var recordID: String?
        /// `device_hash_matches`, rendered only when checked.
        public var deviceHashMatches: Bool?
        /// `user_id` (`--user-field`), rendered only when `hasUserField`, null when the record has none.
        public var userID: String? = nil
        public var hasUserField = false
        public init(source: String, line: Int64, recordID: String? = nil, deviceHashMatches: Bool? = nil) {
            self.deviceHashMatches = deviceHashMatches
            self.source = source
            self.line = line
            self.recordID = recordID
        }
    }

    /// Appends one object (no trailing newline) to `out`.
    ///
    /// - Parameters:
    ///   - receipt: the decoded receipt, or nil when nothing could be decoded; rendered whatever the status.
    ///   - status: the verifyReceipt status (0, 21002, 21003, 21007, 21008).
    ///   - error: the reason, for a non-zero status.
    ///   - record: the input position (`source`, `line`, `record_id`); nil for `inspect` of a single file.
    ///   - pretty: indent by two spaces per level (same key order).
    ///   - detail: the `error_detail` sentence, when the caller has a more specific one than `error`'s own.
    ///   - extra: writes more members at the end of the object (`inspect` adds the container and the verdict).
    public static func render(
        receipt: Receipt?, status: Int32, error: ReceiptError?, detail: String? = nil, record: Record?,
        pretty: Bool = false, into out: inout [UInt8], extra: ((inout JSONWriter, inout [UInt8]) -> Void)? = nil
    ) {
        var w = JSONWriter(layout: pretty ? .indented : .compact)
        w.beginObject(into: &out)
        w.key("status", into: &out)
        DecimalText.append(Int64(status), into: &out)
        if let receipt {
            if let env = receipt.environment {
                w.key("environment", into: &out)
                JSONText.appendString(env, into: &out)
            }
            w.key("receipt", into: &out)
            renderReceipt(receipt, &w, into: &out)
        }
        if let record {
            w.key("source", into: &out)
            JSONText.appendString(record.source, into: &out)
            w.key("line", into: &out)
            DecimalText.append(record.line, into: &out)
            w.key("record_id", into: &out)
            if let id = record.recordID {
                JSONText.appendString(id, into: &out)
            } else {
                JSONText.appendNull(into: &out)
            }
            if let m = record.deviceHashMatches {
                w.key("device_hash_matches", into: &out)
                JSONText.appendBool(m, into: &out)
            }
            if record.hasUserField {
                w.key("user_id", into: &out)
                if let u = record.userID {
                    JSONText.appendString(u, into: &out)
                } else {
                    JSONText.appendNull(into: &out)
                }
            }
        }
        if let error {
            w.key("error_code", into: &out)
            JSONText.appendString(error.code.rawValue, into: &out)
            w.key("error_detail", into: &out)
            JSONText.appendString(detail ?? error.description, into: &out)
        }
        extra?(&w, &out)
        w.endObject(into: &out)
    }

    static func renderReceipt(_ r: Receipt, _ w: inout JSONWriter, into out: inout [UInt8]) {
        w.beginObject(into: &out)
        string(&w, "receipt_type", r.receiptType, into: &out)
        if let id = r.appItemID {
            w.key("adam_id", into: &out)
            DecimalText.append(id, into: &out)
            w.key("app_item_id", into: &out)
            DecimalText.append(id, into: &out)
        }
        string(&w, "bundle_id", r.bundleID, into: &out)
        string(&w, "application_version", r.applicationVersion, into: &out)
        number(&w, "download_id", r.downloadID, into: &out)
        number(&w, "version_external_identifier", r.versionExternalIdentifier, into: &out)
        date(&w, "receipt_creation_date", r.receiptCreationDate, into: &out)
        date(&w, "original_purchase_date", r.originalPurchaseDate, into: &out)
        string(&w, "original_application_version", r.originalApplicationVersion, into: &out)
        date(&w, "expiration_date", r.expirationDate, into: &out)
        w.key("in_app", into: &out)
        w.beginArray(into: &out)
        for p in r.inApp {
            w.element(into: &out)
            renderInApp(p, &w, into: &out)
        }
        w.endArray(into: &out)
        w.endObject(into: &out)
    }

    static func renderInApp(_ p: InAppPurchase, _ w: inout JSONWriter, into out: inout [UInt8]) {
        w.beginObject(into: &out)
        numberString(&w, "quantity", p.quantity, into: &out)
        string(&w, "product_id", p.productID, into: &out)
        string(&w, "transaction_id", p.transactionID, into: &out)
        string(&w, "original_transaction_id", p.originalTransactionID, into: &out)
        date(&w, "purchase_date", p.purchaseDate, into: &out)
        date(&w, "original_purchase_date", p.originalPurchaseDate, into: &out)
        date(&w, "expires_date", p.expiresDate, into: &out)
        date(&w, "cancellation_date", p.cancellationDate, into: &out)
        if let id = p.webOrderLineItemID, id != 0 { numberString(&w, "web_order_line_item_id", id, into: &out) }
        bool(&w, "is_trial_period", p.isTrialPeriod ?? 0, into: &out)
        if let intro = p.isInIntroOfferPeriod { bool(&w, "is_in_intro_offer_period", intro, into: &out) }
        string(&w, "promotional_offer_id", p.promotionalOfferID, into: &out)
        w.endObject(into: &out)
    }

    // MARK: - Members

    private static func string(_ w: inout JSONWriter, _ k: StaticString, _ v: String?, into out: inout [UInt8]) {
        guard let v else { return }
        w.key(k, into: &out)
        JSONText.appendString(v, into: &out)
    }

    private static func number(_ w: inout JSONWriter, _ k: StaticString, _ v: Int64?, into out: inout [UInt8]) {
        guard let v else { return }
        w.key(k, into: &out)
        DecimalText.append(v, into: &out)
    }

    private static func numberString(
        _ w: inout JSONWriter, _ k: StaticString, _ v: Int64?, into out: inout [UInt8]
    ) {
        guard let v else { return }
        w.key(k, into: &out)
        out.append(UInt8(ascii: "\""))
        DecimalText.append(v, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    private static func bool(_ w: inout JSONWriter, _ k: StaticString, _ v: Int64, into out: inout [UInt8]) {
        w.key(k, into: &out)
        out.append(contentsOf: v != 0 ? "\"true\"".utf8 : "\"false\"".utf8)
    }

    /// `x`, `x_ms`, `x_pst`, or nothing when the date is absent.
    static func date(_ w: inout JSONWriter, _ k: StaticString, _ ms: Int64?, into out: inout [UInt8]) {
        guard let ms else { return }
        w.key(k, into: &out)
        out.append(UInt8(ascii: "\""))
        CivilTime.appendGMT(epochMillis: ms, into: &out)
        out.append(UInt8(ascii: "\""))
        w.key(k, suffix: "_ms", into: &out)
        out.append(UInt8(ascii: "\""))
        DecimalText.append(ms, into: &out)
        out.append(UInt8(ascii: "\""))
        w.key(k, suffix: "_pst", into: &out)
        out.append(UInt8(ascii: "\""))
        LosAngelesTime.appendPST(epochMillis: ms, into: &out)
        out.append(UInt8(ascii: "\""))
    }
}
