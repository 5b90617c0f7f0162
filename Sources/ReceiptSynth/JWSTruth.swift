/// The ground truth of one generated JWS (data/README.md, "JWS data"): the `receipts` row and, for a valid
/// transaction, the `transactions` row that `export --trust-anchor <jws-root.pem>` must write for it.
enum JWSTruth {
    /// What a notification's `data` names: what its nested JWS inherit when they cannot be decoded.
    struct NotificationData: Sendable {
        var environment: String
        var bundleID: String
        var appAppleID: Int64?
        var signedDate: Int64
    }

    /// One JWS as the generator made it.
    struct Item: Sendable {
        /// nil: the row of a body that holds no JWS (an empty page).
        var kind: JWSFactory.Kind?
        var jws: String
        var transaction: JWSPayloads.Transaction? = nil
        /// A renewal info: of this transaction.
        var renewalOf: JWSPayloads.Transaction? = nil
        /// A notification: its data.
        var notification: NotificationData? = nil
        /// A JWS nested in a notification: that notification's data.
        var inherited: NotificationData? = nil

        static let emptyBody = Item(kind: nil, jws: "")

        func nested(in n: Item) -> Item {
            var copy = self
            copy.inherited = n.notification
            return copy
        }
    }

    /// The truth line after `{"line":N,`.
    static func tail(index: Int, id: String?, shape: JWSRecordFactory.Shape, _ item: Item) -> String {
        let kind = item.kind
        let decodes = kind != nil && kind != .malformedBase64URL
        var j = JSONText()
        j.int("jws_index", Int64(index))
        j.string("id", id)
        j.string("kind", kind?.rawValue ?? "empty-body")
        let recordKind =
            !decodes
            ? "jws"
            : item.transaction != nil ? "jws_transaction" : item.renewalOf != nil ? "jws_renewal" : "jws_notification"
        j.string("record_kind", recordKind)
        let code = kind == nil ? "jws_malformed" : kind!.expectedCode
        j.int("status", code == nil ? 0 : code == "jws_malformed" ? 21002 : 21003)
        j.string("error_code", code)
        let t = item.transaction
        let r = item.renewalOf
        let n = item.notification
        let environment = decodes ? (t?.environment ?? r?.environment ?? n?.environment) : item.inherited?.environment
        // A renewal info names no bundle: in a notification it takes the notification's.
        let bundle = (decodes ? (t?.bundleID ?? n?.bundleID) : nil) ?? item.inherited?.bundleID
        j.string("receipt_type", environment)
        j.string("bundle_id", bundle)
        j.string("application_version", nil)
        j.string("original_application_version", nil)
        j.int("app_item_id", decodes ? n?.appAppleID : nil)
        j.int("download_id", nil)
        j.int("version_external_identifier", nil)
        let signed: Int64? = t?.signedDate ?? r?.signedDate ?? n?.signedDate
        j.int("receipt_creation_date", decodes ? signed : nil)
        j.int("original_purchase_date", decodes ? t?.originalPurchaseDate : nil)
        j.int("expiration_date", nil)
        j.int("in_app_count", decodes ? (t != nil ? 1 : 0) : nil)
        j.string("digest_algorithm", nil)
        j.string("shape", shape.rawValue)
        j.array("transactions", decodes ? (t.map { [transaction($0)] } ?? []) : [])
        return j.text + "}"
    }

    /// The transactions-table columns of a JWS transaction, as the receipts truth names them.
    static func transaction(_ t: JWSPayloads.Transaction) -> String {
        var j = JSONText()
        j.int("quantity", t.quantity)
        j.string("product_id", t.productID)
        j.string("transaction_id", t.transactionID)
        j.string("original_transaction_id", t.originalTransactionID)
        j.int("purchase_date", t.purchaseDate)
        j.int("original_purchase_date", t.originalPurchaseDate)
        j.int("expires_date", t.expiresDate)
        j.int("cancellation_date", t.revocationDate)
        j.int("web_order_line_item_id", t.webOrderLineItemID)
        j.bool("is_trial_period", nil)
        j.bool("is_in_intro_offer_period", nil)
        j.string("promotional_offer_id", nil)
        j.int("product_type", nil)
        j.int("cancellation_reason", t.revocationReason)
        return "{" + j.text + "}"
    }
}
