import ReceiptModel
import ReceiptSink

/// Renders one receipts row and its transactions as a verifyReceipt-shaped JSON object (`--format ndjson`,
/// receipt-format.md section 6), from the columns just appended, into `ColumnBatch.ndjson`.
///
/// Numbers and booleans of `in_app` are strings and dates come in three forms, as Apple wrote them; the record's
/// `source`, `line`, `record_id` and, on failure, `error_code`/`error_detail` are added at the top level.
final class VerifyReceiptRenderer {
    func append(_ batch: inout ColumnBatch, row r: Int, transactions: Range<Int>) {
        var out: [UInt8] = []
        // Take the buffer out of the batch so that the columns can be read while it grows (no copy).
        swap(&out, &batch.ndjson)
        defer { swap(&out, &batch.ndjson) }
        let t = batch.receipts
        typealias C = ReceiptsColumns
        out.append(contentsOf: #"{"status":"#.utf8)
        DecimalText.append(Int64(t.int32s[C.status][r] ?? 0), into: &out)
        let hasReceipt = t.strings[C.receiptSHA256].valid[r] && t.strings[C.receiptType].valid[r]
        if hasReceipt {
            t.strings[C.receiptType].withBytes(r) { type in
                let sandbox = EnvironmentRequirement.isSandbox(type)
                let xcode = type.elementsEqual("Xcode".utf8)
                out.append(contentsOf: #","environment":"#.utf8)
                out.append(contentsOf: (xcode ? #""Xcode""# : sandbox ? #""Sandbox""# : #""Production""#).utf8)
            }
        }
        if t.strings[C.receiptSHA256].valid[r] {
            out.append(contentsOf: #","receipt":"#.utf8)
            var o = ObjectWriter(out: out)
            out = []
            func string(_ k: String, _ col: Int) {
                guard t.strings[col].valid[r] else { return }
                o.key(k)
                t.strings[col].withBytes(r) { JSONText.appendString($0, into: &o.out) }
            }
            func number(_ k: String, _ v: Int64?) {
                guard let v else { return }
                o.key(k)
                DecimalText.append(v, into: &o.out)
            }
            func date(_ k: String, _ v: Int64?) { if let v { o.date(k, v) } }
            string("receipt_type", C.receiptType)
            number("adam_id", t.int64s[C.appItemID][r])
            number("app_item_id", t.int64s[C.appItemID][r])
            string("bundle_id", C.bundleID)
            string("application_version", C.applicationVersion)
            number("download_id", t.int64s[C.downloadID][r])
            number("version_external_identifier", t.int64s[C.versionExternalIdentifier][r])
            date("receipt_creation_date", t.int64s[C.receiptCreationDate][r])
            date("original_purchase_date", t.int64s[C.originalPurchaseDate][r])
            string("original_application_version", C.originalApplicationVersion)
            date("receipt_expiration_date", t.int64s[C.expirationDate][r])
            o.key("in_app")
            o.out.append(UInt8(ascii: "["))
            for (k, tr) in transactions.enumerated() {
                if k > 0 { o.out.append(UInt8(ascii: ",")) }
                Self.inApp(batch.transactions, tr, &o.out)
            }
            o.out.append(contentsOf: "]".utf8)
            o.close()
            swap(&out, &o.out)
        }
        out.append(contentsOf: #","source":"#.utf8)
        t.strings[C.source].withBytes(r) { JSONText.appendString($0, into: &out) }
        out.append(contentsOf: #","line":"#.utf8)
        DecimalText.append(t.int64s[C.line][r] ?? 0, into: &out)
        out.append(contentsOf: #","record_id":"#.utf8)
        if t.strings[C.recordID].valid[r] {
            t.strings[C.recordID].withBytes(r) { JSONText.appendString($0, into: &out) }
        } else {
            out.append(contentsOf: "null".utf8)
        }
        if t.strings[C.errorCode].valid[r] {
            out.append(contentsOf: #","error_code":"#.utf8)
            t.strings[C.errorCode].withBytes(r) { JSONText.appendString($0, into: &out) }
            out.append(contentsOf: #","error_detail":"#.utf8)
            t.strings[C.errorDetail].withBytes(r) { JSONText.appendString($0, into: &out) }
        }
        out.append(contentsOf: "}\n".utf8)
    }

    /// One `in_app` entry in Apple's key order, with Apple's omissions.
    private static func inApp(_ t: ColumnTable, _ r: Int, _ out: inout [UInt8]) {
        typealias C = TransactionsColumns
        var o = ObjectWriter(out: [])
        swap(&o.out, &out)
        defer { swap(&o.out, &out) }
        func string(_ k: String, _ col: Int) {
            guard t.strings[col].valid[r] else { return }
            o.key(k)
            t.strings[col].withBytes(r) { JSONText.appendString($0, into: &o.out) }
        }
        func quoted(_ k: String, _ v: Int64?) {
            guard let v else { return }
            o.key(k)
            o.out.append(UInt8(ascii: "\""))
            DecimalText.append(v, into: &o.out)
            o.out.append(UInt8(ascii: "\""))
        }
        func date(_ k: String, _ v: Int64?) { if let v { o.date(k, v) } }
        quoted("quantity", t.int32s[C.quantity][r].map(Int64.init))
        string("product_id", C.productID)
        string("transaction_id", C.transactionID)
        string("original_transaction_id", C.originalTransactionID)
        date("purchase_date", t.int64s[C.purchaseDate][r])
        date("original_purchase_date", t.int64s[C.originalPurchaseDate][r])
        date("expires_date", t.int64s[C.expiresDate][r])
        date("cancellation_date", t.int64s[C.cancellationDate][r])
        if let w = t.int64s[C.webOrderLineItemID][r], w != 0 { quoted("web_order_line_item_id", w) }
        o.key("is_trial_period")
        o.out.append(contentsOf: (t.bools[C.isTrialPeriod][r] == true ? #""true""# : #""false""#).utf8)
        if let intro = t.bools[C.isInIntroOfferPeriod][r] {
            o.key("is_in_intro_offer_period")
            o.out.append(contentsOf: (intro ? #""true""# : #""false""#).utf8)
        }
        string("promotional_offer_id", C.promotionalOfferID)
        o.close()
    }
}

/// Appends one JSON object key by key: `{` before the first, `,` between, `}` on `close`.
struct ObjectWriter {
    var out: [UInt8]
    private var first = true

    init(out: [UInt8]) { self.out = out }

    mutating func key(_ k: String) {
        out.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
        first = false
        JSONText.appendString(k, into: &out)
        out.append(UInt8(ascii: ":"))
    }

    mutating func close() { out.append(contentsOf: (first ? "{}" : "}").utf8) }

    /// `x`, `x_ms` and `x_pst`, as verifyReceipt wrote every date.
    mutating func date(_ k: String, _ v: Int64) {
        key(k)
        out.append(UInt8(ascii: "\""))
        CivilTime.appendGMT(epochMillis: v, into: &out)
        out.append(UInt8(ascii: "\""))
        key(k + "_ms")
        out.append(UInt8(ascii: "\""))
        DecimalText.append(v, into: &out)
        out.append(UInt8(ascii: "\""))
        key(k + "_pst")
        out.append(UInt8(ascii: "\""))
        LosAngelesTime.appendPST(epochMillis: v, into: &out)
        out.append(UInt8(ascii: "\""))
    }
}
