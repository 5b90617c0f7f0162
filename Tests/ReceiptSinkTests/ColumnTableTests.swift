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
        #expect(slot("device_hash_matches") == ReceiptsColumns.deviceHashMatches)
        #expect(slot("record_kind") == ReceiptsColumns.recordKind)
        #expect(slot("jws_index") == ReceiptsColumns.jwsIndex)
        #expect(slot("user_id") == ReceiptsColumns.userID)
        #expect(s.columns.last?.name == "user_id")
        #expect(s.columns.count == 25)
    }

    @Test func subscriptionSlotsMatchSchema() {
        let s = TableSchema.subscriptions
        func slot(_ n: String) -> Int { s.column(named: n)!.slot }
        #expect(slot("state") == SubscriptionsColumns.state)
        #expect(slot("auto_renew_product_id") == SubscriptionsColumns.autoRenewProductID)
        #expect(slot("is_in_billing_retry_period") == SubscriptionsColumns.isInBillingRetryPeriod)
        #expect(slot("user_id") == SubscriptionsColumns.userID)
        #expect(slot("multiple_user_ids") == SubscriptionsColumns.multipleUserIDs)
        #expect(slot("app_account_token") == SubscriptionsColumns.appAccountToken)
        #expect(s.columns.suffix(3).map(\.name) == ["user_id", "multiple_user_ids", "app_account_token"])
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
        let jwsOnly = [
            ("type", TransactionsColumns.type), ("in_app_ownership_type", TransactionsColumns.inAppOwnershipType),
            ("revocation_date", TransactionsColumns.revocationDate),
            ("revocation_reason", TransactionsColumns.revocationReason),
            ("is_upgraded", TransactionsColumns.isUpgraded), ("offer_type", TransactionsColumns.offerType),
            ("offer_identifier", TransactionsColumns.offerIdentifier), ("storefront", TransactionsColumns.storefront),
            ("transaction_reason", TransactionsColumns.transactionReason), ("price", TransactionsColumns.price),
            ("currency", TransactionsColumns.currency), ("app_account_token", TransactionsColumns.appAccountToken),
            ("subscription_group_identifier", TransactionsColumns.subscriptionGroupIdentifier),
            ("signed_date", TransactionsColumns.signedDate), ("environment", TransactionsColumns.environment),
            ("jws_index", TransactionsColumns.jwsIndex),
            ("offer_discount_type", TransactionsColumns.offerDiscountType),
        ]
        for (name, expected) in jwsOnly { #expect(slot(name) == expected, "\(name)") }
        // The receipt-era columns first, in their order; the JWS-only ones after them.
        #expect(s.columns.dropFirst(19).map(\.name) == jwsOnly.map(\.0))
        #expect(s.columns.count == 36)
    }

    @Test func renewalSlotsMatchSchema() {
        let s = TableSchema.renewals
        func slot(_ n: String) -> Int { s.column(named: n)!.slot }
        let columns = [
            ("source", RenewalsColumns.source), ("line", RenewalsColumns.line), ("record_id", RenewalsColumns.recordID),
            ("jws_index", RenewalsColumns.jwsIndex), ("environment", RenewalsColumns.environment),
            ("original_transaction_id", RenewalsColumns.originalTransactionID),
            ("product_id", RenewalsColumns.productID), ("auto_renew_product_id", RenewalsColumns.autoRenewProductID),
            ("auto_renew_status", RenewalsColumns.autoRenewStatus),
            ("expiration_intent", RenewalsColumns.expirationIntent),
            ("is_in_billing_retry_period", RenewalsColumns.isInBillingRetryPeriod),
            ("grace_period_expires_date", RenewalsColumns.gracePeriodExpiresDate),
            ("price_increase_status", RenewalsColumns.priceIncreaseStatus), ("offer_type", RenewalsColumns.offerType),
            ("offer_identifier", RenewalsColumns.offerIdentifier),
            ("recent_subscription_start_date", RenewalsColumns.recentSubscriptionStartDate),
            ("renewal_date", RenewalsColumns.renewalDate), ("renewal_price", RenewalsColumns.renewalPrice),
            ("currency", RenewalsColumns.currency), ("signed_date", RenewalsColumns.signedDate),
        ]
        for (name, expected) in columns { #expect(slot(name) == expected, "\(name)") }
        #expect(s.columns.map(\.name) == columns.map(\.0))
    }

    @Test func appendKeepsColumnsAligned() {
        var t = ColumnTable(schema: .receipts)
        t.append(string: ReceiptsColumns.source, "a.ndjson")
        t.append(string: ReceiptsColumns.bundleID, nil as String?)
        #expect(t.strings[ReceiptsColumns.source][0] == "a.ndjson")
        #expect(t.strings[ReceiptsColumns.bundleID][0] == nil)
        #expect(!t.isConsistent)  // the other columns have no row yet
    }

    static let small = TableSchema(
        name: "small", [("s", .string, true), ("i", .int64, true), ("n", .int32, true), ("b", .bool, true)])

    /// Row `r` of the test table: a string whose length cycles through 0...700 bytes (past the first byte
    /// capacity), nulls every 7th row, and values that tell the rows apart.
    static func row(_ r: Int) -> (String?, Int64?, Int32?, Bool?) {
        if r % 7 == 3 { return (nil, nil, nil, nil) }
        let text = String(repeating: Character(UnicodeScalar(UInt8(97 + r % 26))), count: (r * 37) % 701)
        return (text, Int64(r) * 1_000_003 - 5, Int32(truncatingIfNeeded: -r), r % 2 == 0)
    }

    static func fill(_ t: inout ColumnTable, _ rows: Range<Int>) {
        for r in rows {
            let (s, i, n, b) = row(r)
            t.appendRow { w in
                w.string(0, s)
                w.int64(0, i)
                w.int32(0, n)
                w.bool(0, b)
            }
        }
    }

    static func check(_ t: ColumnTable, _ rows: Range<Int>) {
        #expect(t.rowCount == rows.count)
        #expect(t.isConsistent)
        for (k, r) in rows.enumerated() {
            let (s, i, n, b) = row(r)
            #expect(t.strings[0][k] == s)
            #expect(t.int64s[0][k] == i)
            #expect(t.int32s[0][k] == n)
            #expect(t.bools[0][k] == b)
        }
    }

    @Test func rowsReadBackAcrossBufferGrowth() {
        var t = ColumnTable(schema: Self.small)
        Self.fill(&t, 0..<3000)
        Self.check(t, 0..<3000)
        // Null rows take no bytes, and the offsets are the running byte count.
        let s = t.strings[0]
        #expect(s.offsets[0] == 0)
        #expect(s.offsets[4] == s.offsets[3])
        #expect(s.offsets[3000] == s.bytes.count)
        #expect(t.int64s[0].values[3] == 0 && !t.int64s[0].valid[3])
    }

    @Test func removeAllEmptiesTheTableForReuse() {
        var t = ColumnTable(schema: Self.small)
        Self.fill(&t, 0..<500)
        t.removeAll()
        #expect(t.rowCount == 0)
        #expect(t.isConsistent)
        #expect(t.strings[0].bytes.count == 0)
        Self.fill(&t, 500..<600)
        Self.check(t, 500..<600)
    }

    @Test func copiesAreIndependentValues() {
        var a = ColumnTable(schema: Self.small)
        Self.fill(&a, 0..<100)
        let b = a
        let view = a.strings[0]
        Self.fill(&a, 100..<2000)  // grows a's buffers: b and the view keep the old ones
        Self.check(b, 0..<100)
        Self.check(a, 0..<2000)
        #expect(view.count == 100)
        #expect(view[99] == Self.row(99).0)

        var c = a
        c.removeAll()  // clearing a shared table leaves the other copy whole
        Self.check(a, 0..<2000)
        Self.fill(&c, 7..<9)
        Self.check(c, 7..<9)
        Self.check(a, 0..<2000)
    }

    @Test func stringValuesBuiltFromParts() {
        var t = ColumnTable(schema: Self.small)
        let long = [UInt8](repeating: 0x7A, count: 1000)
        t.appendRow { w in
            w.string(0) { b in
                b.append("ab" as StaticString)
                b.append(UInt8(ascii: "c"))
                long.withUnsafeBytes { b.append($0) }
            }
            w.int64(0, nil)
            w.int32(0, nil)
            w.bool(0, nil)
        }
        t.appendRow { w in
            w.string(0) { _ in }  // no parts: an empty, non-null value
            w.int64(0, 1)
            w.int32(0, 2)
            w.bool(0, true)
        }
        #expect(t.strings[0][0] == "abc" + String(repeating: "z", count: 1000))
        #expect(t.strings[0][1] == "")
        #expect(t.int64s[0][1] == 1 && t.int32s[0][1] == 2 && t.bools[0][1] == true)
    }

    @Test func rawBytesAndStaticStringsAppend() {
        var t = ColumnTable(schema: Self.small)
        let bytes: [UInt8] = [0, 0xFF, 0x41]
        bytes.withUnsafeBytes { p in
            t.appendRow { w in
                w.string(0, p)
                w.int64(0, .min)
                w.int32(0, .max)
                w.bool(0, false)
            }
        }
        t.appendRow { w in
            w.string(0, "sha256" as StaticString)
            w.int64(0, .max)
            w.int32(0, .min)
            w.bool(0, nil)
        }
        t.append(string: 0, bytes: nil)
        t.append(int64: 0, nil)
        t.append(int32: 0, nil)
        t.append(bool: 0, nil)
        t.rowCount += 1
        #expect(t.isConsistent)
        #expect(t.strings[0].withBytes(0) { Array($0) } == bytes)
        #expect(t.strings[0][1] == "sha256")
        #expect(t.strings[0][2] == nil)
        #expect(t.int64s[0][0] == .min && t.int64s[0][1] == .max)
        #expect(t.int32s[0][0] == .max && t.int32s[0][1] == .min)
        #expect(t.bools[0][0] == false && t.bools[0][1] == nil)
    }

    /// Row `r` for the byte-exact checks: `r % 41` octets that differ at every position (every length the inline
    /// copy distinguishes: 1...3, 4...7, 8...16, 17...32, longer), null every 9th row.
    static func bytesRow(_ r: Int) -> [UInt8]? {
        r % 9 == 4 ? nil : (0..<(r % 41)).map { UInt8(truncatingIfNeeded: r &* 31 &+ $0 &* 7 &+ 1) }
    }

    /// `appendRows` (column by column, in blocks of several sizes, across the buffers' growth) holds exactly what
    /// `appendRow` holds for the same rows.
    @Test func blocksAppendAsRows() {
        var byRow = ColumnTable(schema: Self.small)
        var byBlock = ColumnTable(schema: Self.small)
        var r = 0
        for size in [0, 1, 5, 40, 3, 130] {
            let rows = (r..<(r + size)).map { Self.bytesRow($0) }
            for v in rows {
                let k = byRow.rowCount
                byRow.appendRow { w in
                    if let v { v.withUnsafeBytes { w.string(0, $0) } } else { w.null(string: 0) }
                    w.int64(0, k % 5 == 0 ? nil : Int64(k) << 40)
                    w.int32(0, k % 6 == 0 ? nil : Int32(-k))
                    w.bool(0, k % 4 == 0 ? nil : k % 3 == 0)
                }
            }
            let first = byBlock.rowCount
            let flat = rows.map { $0 ?? [] }
            var all: [UInt8] = flat.flatMap { $0 }
            all.withUnsafeMutableBytes { buf in
                var offsets = [0]
                for v in flat { offsets.append(offsets.last! + v.count) }
                byBlock.appendRows(size) { w in
                    w.string(0) { i in
                        rows[i] == nil ? nil : UnsafeRawBufferPointer(rebasing: buf[offsets[i]..<offsets[i + 1]])
                    }
                    w.int64(0) { i in (first + i) % 5 == 0 ? nil : Int64(first + i) << 40 }
                    w.int32(0) { i in (first + i) % 6 == 0 ? nil : Int32(-(first + i)) }
                    w.bool(0) { i in (first + i) % 4 == 0 ? nil : (first + i) % 3 == 0 }
                }
            }
            r += size
        }
        #expect(byBlock.rowCount == r && byRow.rowCount == r && byBlock.isConsistent)
        for k in 0..<r {
            #expect(byBlock.strings[0].valid[k] == (Self.bytesRow(k) != nil))
            #expect(byBlock.strings[0].withBytes(k) { Array($0) } == Self.bytesRow(k) ?? [])
            #expect(byRow.strings[0].withBytes(k) { Array($0) } == Self.bytesRow(k) ?? [])
            #expect(byBlock.int64s[0][k] == byRow.int64s[0][k])
            #expect(byBlock.int32s[0][k] == byRow.int32s[0][k])
            #expect(byBlock.bools[0][k] == byRow.bools[0][k])
        }
    }
}
