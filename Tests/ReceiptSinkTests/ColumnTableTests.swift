import ReceiptModel
import Testing

@Suite struct ColumnTableTests {
    /// The named slot constants must point at the contract's columns, or every writer fills the wrong column.
    @Test func receiptSlotsMatchSchema() {
        let s = TableSchema.receipts
        func slot(_ n: String) -> Int { s.column(named: n)!.slot }
        #expect(slot("source") == ReceiptsColumns.source)
        #expect(slot("record_id") == ReceiptsColumns.recordID)
        #expect(slot("error_code") == ReceiptsColumns.errorCode)
        #expect(slot("error_detail") == ReceiptsColumns.errorDetail)
        #expect(slot("receipt_type") == ReceiptsColumns.receiptType)
        #expect(slot("bundle_id") == ReceiptsColumns.bundleID)
        #expect(slot("application_version") == ReceiptsColumns.applicationVersion)
        #expect(slot("original_application_version") == ReceiptsColumns.originalApplicationVersion)
        #expect(slot("digest_algorithm") == ReceiptsColumns.digestAlgorithm)
        #expect(slot("signer_sha256") == ReceiptsColumns.signerSHA256)
        #expect(slot("receipt_sha256") == ReceiptsColumns.receiptSHA256)
        #expect(slot("line") == ReceiptsColumns.line)
        #expect(slot("app_item_id") == ReceiptsColumns.appItemID)
        #expect(slot("download_id") == ReceiptsColumns.downloadID)
        #expect(slot("version_external_identifier") == ReceiptsColumns.versionExternalIdentifier)
        #expect(slot("receipt_creation_date") == ReceiptsColumns.receiptCreationDate)
        #expect(slot("original_purchase_date") == ReceiptsColumns.originalPurchaseDate)
        #expect(slot("expiration_date") == ReceiptsColumns.expirationDate)
        #expect(slot("status") == ReceiptsColumns.status)
        #expect(slot("in_app_count") == ReceiptsColumns.inAppCount)
        #expect(slot("verified") == ReceiptsColumns.verified)
        #expect(s.columns.count == 21)
    }

    @Test func transactionSlotsMatchSchema() {
        let s = TableSchema.transactions
        func slot(_ n: String) -> Int { s.column(named: n)!.slot }
        #expect(slot("source") == TransactionsColumns.source)
        #expect(slot("record_id") == TransactionsColumns.recordID)
        #expect(slot("bundle_id") == TransactionsColumns.bundleID)
        #expect(slot("receipt_type") == TransactionsColumns.receiptType)
        #expect(slot("product_id") == TransactionsColumns.productID)
        #expect(slot("transaction_id") == TransactionsColumns.transactionID)
        #expect(slot("original_transaction_id") == TransactionsColumns.originalTransactionID)
        #expect(slot("promotional_offer_id") == TransactionsColumns.promotionalOfferID)
        #expect(slot("line") == TransactionsColumns.line)
        #expect(slot("purchase_date") == TransactionsColumns.purchaseDate)
        #expect(slot("original_purchase_date") == TransactionsColumns.originalPurchaseDate)
        #expect(slot("expires_date") == TransactionsColumns.expiresDate)
        #expect(slot("cancellation_date") == TransactionsColumns.cancellationDate)
        #expect(slot("web_order_line_item_id") == TransactionsColumns.webOrderLineItemID)
        #expect(slot("quantity") == TransactionsColumns.quantity)
        #expect(slot("product_type") == TransactionsColumns.productType)
        #expect(slot("cancellation_reason") == TransactionsColumns.cancellationReason)
        #expect(slot("is_trial_period") == TransactionsColumns.isTrialPeriod)
        #expect(slot("is_in_intro_offer_period") == TransactionsColumns.isInIntroOfferPeriod)
        #expect(s.columns.count == 19)
    }

    @Test func appendKeepsColumnsAligned() {
        var t = ColumnTable(schema: .receipts)
        t.strings[ReceiptsColumns.source].append("a.ndjson")
        t.strings[ReceiptsColumns.bundleID].append(nil as String?)
        #expect(t.strings[ReceiptsColumns.source][0] == "a.ndjson")
        #expect(t.strings[ReceiptsColumns.bundleID][0] == nil)
        #expect(!t.isConsistent)  // the other columns have no row yet
    }
}
