/// The ground-truth line of one record (data/README.md describes the format).
enum Truth {
    /// Everything after `{"line":N,`: id, kind, status, error code, receipt fields, transactions.
    static func tail(
        id: String?, kind: RecordKind, shape: String?, spec: ReceiptSpec?, digest: ReceiptSigner.Digest?,
        form: EncodingForm?, device: (id: String?, matches: Bool?)? = nil
    ) -> String {
        var j = JSONText()
        j.string("id", id)
        j.string("kind", kind.rawValue)
        j.int("status", Int64(kind.status))
        j.string("error_code", kind.errorCode)
        let s = kind.decodes ? spec : nil
        j.string("receipt_type", s?.string(0))
        j.string("bundle_id", s?.string(2))
        j.string("application_version", s?.string(3))
        j.string("original_application_version", s?.string(19))
        j.int("app_item_id", s?.integer(1))
        j.int("download_id", s?.integer(15))
        j.int("version_external_identifier", s?.integer(16))
        j.int("receipt_creation_date", s?.date(12))
        j.int("original_purchase_date", s?.date(18))
        j.int("expiration_date", s?.date(21))
        j.int("in_app_count", s.map { Int64($0.inAppEntries.count) })
        j.string("digest_algorithm", s != nil ? digest.map { $0.rawValue } : nil)
        j.string("encoding", s != nil ? form.map { $0 == .der ? "der" : "ber" } : nil)
        j.string("shape", shape)
        if let device {
            // With `generate --device-ids`: what `export --device-id-field device_id` says in device_hash_matches.
            j.string("device_id", device.id)
            j.bool("device_hash_matches", device.matches)
        }
        j.array("transactions", (s?.inAppEntries ?? []).map(transaction))
        return j.text + "}"
    }

    static func transaction(_ e: ReceiptSpec) -> String {
        var j = JSONText()
        j.int("quantity", e.integer(1701))
        j.string("product_id", e.string(1702))
        j.string("transaction_id", e.string(1703))
        j.string("original_transaction_id", e.string(1705))
        j.int("purchase_date", e.date(1704))
        j.int("original_purchase_date", e.date(1706))
        j.int("expires_date", e.date(1708))
        j.int("cancellation_date", e.date(1712))
        j.int("web_order_line_item_id", e.integer(1711))
        j.bool("is_trial_period", e.integer(1713).map { $0 != 0 })
        j.bool("is_in_intro_offer_period", e.integer(1719).map { $0 != 0 })
        j.string("promotional_offer_id", e.string(1721))
        j.int("product_type", e.integer(1707))
        j.int("cancellation_reason", e.integer(1720))
        return "{" + j.text + "}"
    }
}
