/// The key of a `purchases` row.
struct PurchaseKey: Hashable, Sendable {
    var environment: UInt8
    var bundleID: [UInt8]
    var transactionID: [UInt8]

    /// Hashes the byte strings as blocks (the synthesized hash feeds the hasher one byte at a time).
    func hash(into h: inout Hasher) {
        h.combine(environment)
        bundleID.withUnsafeBytes { h.combine(bytes: $0) }
        h.combine(bundleID.count)
        transactionID.withUnsafeBytes { h.combine(bytes: $0) }
    }
}

/// One `purchases` row in the making: the merge of one or more occurrences of the same key.
///
/// `merge` is associative and commutative (the newest occurrence wins by the total recency order, counts add,
/// dates take their min and max), so the result does not depend on the order occurrences meet in: not on
/// threads, batch sizes, spill partitions or resumed parts.
struct PurchaseRecord: Sendable {
    var key: PurchaseKey
    /// Recency of the occurrence the fact columns come from (its input and line give `source` and `line`).
    var newest: Recency
    var originalTransactionID: [UInt8]?
    var productID: [UInt8]
    var quantity: Int32?
    var purchaseDate: Int64?
    var originalPurchaseDate: Int64?
    var expiresDate: Int64?
    var webOrderLineItemID: Int64?
    var isTrialPeriod: Bool?
    var isInIntroOfferPeriod: Bool?
    var promotionalOfferID: [UInt8]?
    var productType: Int32?
    /// The newest occurrence that had a cancellation date, with that date and reason.
    var cancelledAt: Recency?
    var cancellationDate: Int64?
    var cancellationReason: Int32?
    /// Min and max receipt creation date over the occurrences (nil when none was dated).
    var firstSeen: Int64?
    var lastSeen: Int64?
    var occurrences: Int64

    mutating func merge(_ o: PurchaseRecord) {
        occurrences += o.occurrences
        if let f = o.firstSeen { firstSeen = min(firstSeen ?? f, f) }
        if let l = o.lastSeen { lastSeen = max(lastSeen ?? l, l) }
        if let c = o.cancelledAt, cancelledAt.map({ $0 < c }) ?? true {
            cancelledAt = c
            cancellationDate = o.cancellationDate
            cancellationReason = o.cancellationReason
        }
        if newest < o.newest {
            newest = o.newest
            originalTransactionID = o.originalTransactionID
            productID = o.productID
            quantity = o.quantity
            purchaseDate = o.purchaseDate
            originalPurchaseDate = o.originalPurchaseDate
            expiresDate = o.expiresDate
            webOrderLineItemID = o.webOrderLineItemID
            isTrialPeriod = o.isTrialPeriod
            isInIntroOfferPeriod = o.isInIntroOfferPeriod
            promotionalOfferID = o.promotionalOfferID
            productType = o.productType
        }
    }

    /// Approximate heap bytes while held in a dictionary (the value, its arrays and the table's slack).
    var estimatedBytes: Int {
        2 * MemoryLayout<PurchaseRecord>.stride + 3 * 48 + key.bundleID.count + key.transactionID.count
            + productID.count + (originalTransactionID.map { 48 + $0.count } ?? 0)
            + (promotionalOfferID.map { 48 + $0.count } ?? 0)
    }

    func partition(_ count: Int, seed: UInt64) -> Int {
        Int(stableHash([key.environment], key.bundleID, key.transactionID, seed: seed) % UInt64(count))
    }

    /// The row order of `purchases`: environment, bundle_id, original_transaction_id (null first),
    /// purchase_date (null first), transaction_id; strings bytewise.
    static func precedes(_ a: PurchaseRecord, _ b: PurchaseRecord) -> Bool {
        if a.key.environment != b.key.environment { return a.key.environment < b.key.environment }
        let c = compareBytes(a.key.bundleID, b.key.bundleID)
        if c != 0 { return c < 0 }
        switch (a.originalTransactionID, b.originalTransactionID) {
        case (nil, .some): return true
        case (.some, nil): return false
        case (let x?, let y?):
            let c = compareBytes(x, y)
            if c != 0 { return c < 0 }
        case (nil, nil): break
        }
        let pa = a.purchaseDate ?? Int64.min
        let pb = b.purchaseDate ?? Int64.min
        if (a.purchaseDate == nil) != (b.purchaseDate == nil) { return a.purchaseDate == nil }
        if pa != pb { return pa < pb }
        return compareBytes(a.key.transactionID, b.key.transactionID) < 0
    }

    func encode(into w: inout SpillWriter) {
        w.u8(key.environment)
        w.text(key.bundleID)
        w.text(key.transactionID)
        newest.encode(into: &w)
        w.text(originalTransactionID)
        w.text(productID)
        w.i32(quantity)
        w.i64(purchaseDate)
        w.i64(originalPurchaseDate)
        w.i64(expiresDate)
        w.i64(webOrderLineItemID)
        w.bool(isTrialPeriod)
        w.bool(isInIntroOfferPeriod)
        w.text(promotionalOfferID)
        w.i32(productType)
        if let c = cancelledAt {
            w.u8(1)
            c.encode(into: &w)
            w.i64(cancellationDate)
            w.i32(cancellationReason)
        } else {
            w.u8(0)
        }
        w.i64(firstSeen)
        w.i64(lastSeen)
        w.i64(occurrences)
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> PurchaseRecord {
        let key = PurchaseKey(environment: try r.u8(), bundleID: try r.text(), transactionID: try r.text())
        let newest = try Recency.decode(&r)
        let otid = try r.optionalText()
        let product = try r.text()
        let quantity = try r.optionalI32()
        let purchase = try r.optionalI64()
        let originalPurchase = try r.optionalI64()
        let expires = try r.optionalI64()
        let webOrder = try r.optionalI64()
        let trial = try r.optionalBool()
        let intro = try r.optionalBool()
        let promo = try r.optionalText()
        let productType = try r.optionalI32()
        var cancelledAt: Recency? = nil
        var cancellationDate: Int64? = nil
        var cancellationReason: Int32? = nil
        if try r.u8() != 0 {
            cancelledAt = try Recency.decode(&r)
            cancellationDate = try r.optionalI64()
            cancellationReason = try r.optionalI32()
        }
        return PurchaseRecord(
            key: key, newest: newest, originalTransactionID: otid, productID: product, quantity: quantity,
            purchaseDate: purchase, originalPurchaseDate: originalPurchase, expiresDate: expires,
            webOrderLineItemID: webOrder, isTrialPeriod: trial, isInIntroOfferPeriod: intro, promotionalOfferID: promo,
            productType: productType, cancelledAt: cancelledAt, cancellationDate: cancellationDate,
            cancellationReason: cancellationReason, firstSeen: try r.optionalI64(), lastSeen: try r.optionalI64(),
            occurrences: try r.i64())
    }
}
