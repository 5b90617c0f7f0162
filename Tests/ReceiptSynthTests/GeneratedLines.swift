import Foundation
import ReceiptModel
import ReceiptSynth
import Testing

/// Reads generated lines and truth the way an independent consumer would (JSONSerialization, Foundation base64),
/// so the tests do not reuse the generator's own code to judge it.
enum GeneratedLines {
    /// The receipt bytes of a line: the top-level `receipt-data` string, JSON-unescaped, whitespace removed,
    /// base64-decoded. Nil when any step fails.
    static func receiptBytes(_ line: [UInt8]) -> [UInt8]? {
        guard let obj = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
            let s = obj["receipt-data"] as? String
        else { return nil }
        let compact = s.filter { !$0.isWhitespace }
        return Data(base64Encoded: compact).map { [UInt8]($0) }
    }

    static func int(_ v: Any?) -> Int64? { (v as? NSNumber)?.int64Value }
    static func str(_ v: Any?) -> String? { v as? String }
    static func bool(_ v: Any?) -> Bool? { v is NSNull || v == nil ? nil : (v as? Bool) }

    /// Expects every receipt field and transaction of `receipt` (decoded by ReceiptDER) to equal the truth
    /// object's; returns the number of transactions compared.
    @discardableResult
    static func expectReceipt(_ receipt: Receipt, matches t: [String: Any]) throws -> Int {
        var transactions = 0
        #expect(receipt.receiptType == str(t["receipt_type"]))
        #expect(receipt.bundleID == str(t["bundle_id"]))
        #expect(receipt.applicationVersion == str(t["application_version"]))
        #expect(receipt.originalApplicationVersion == str(t["original_application_version"]))
        #expect(receipt.appItemID == int(t["app_item_id"]))
        #expect(receipt.downloadID == int(t["download_id"]))
        #expect(receipt.versionExternalIdentifier == int(t["version_external_identifier"]))
        #expect(receipt.receiptCreationDate == int(t["receipt_creation_date"]))
        #expect(receipt.originalPurchaseDate == int(t["original_purchase_date"]))
        #expect(receipt.expirationDate == int(t["expiration_date"]))
        #expect(receipt.inApp.count == int(t["in_app_count"]).map(Int.init))
        let expected = try #require(t["transactions"] as? [[String: Any]])
        try #require(receipt.inApp.count == expected.count)
        for (p, e) in zip(receipt.inApp, expected) {
            transactions += 1
            #expect(p.quantity == int(e["quantity"]))
            #expect(p.productID == str(e["product_id"]))
            #expect(p.transactionID == str(e["transaction_id"]))
            #expect(p.originalTransactionID == str(e["original_transaction_id"]))
            #expect(p.purchaseDate == int(e["purchase_date"]))
            #expect(p.originalPurchaseDate == int(e["original_purchase_date"]))
            #expect(p.expiresDate == int(e["expires_date"]))
            #expect(p.cancellationDate == int(e["cancellation_date"]))
            #expect(p.webOrderLineItemID == int(e["web_order_line_item_id"]))
            #expect(p.isTrialPeriod.map { $0 != 0 } == bool(e["is_trial_period"]))
            #expect(p.isInIntroOfferPeriod.map { $0 != 0 } == bool(e["is_in_intro_offer_period"]))
            #expect(p.promotionalOfferID == str(e["promotional_offer_id"]))
            #expect(p.productType == int(e["product_type"]))
            #expect(p.cancellationReason == int(e["cancellation_reason"]))
        }
        return transactions
    }

    /// The truth object of a record (`line` set to 0: the writer numbers lines).
    static func truth(_ r: GeneratedRecord) throws -> [String: Any] {
        let text = "{\"line\":0," + r.truthTail
        return try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
    }
}

/// One in-memory test PKI for the whole test target (deriving its keys takes seconds in debug builds).
enum SharedPKI {
    static let pki = try! TestPKI.load(directory: nil)
}
