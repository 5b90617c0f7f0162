import ReceiptModel

/// The key of one period in the subscriptions pass: its subscription's key, then its rank (purchase_date, then
/// transaction_id), so that the periods come out of the store grouped by subscription in rank order.
struct PeriodKey: Hashable, Sendable {
    var subscription: SubscriptionKey
    var order: PeriodOrder

    func hash(into h: inout Hasher) {
        h.combine(subscription)
        h.combine(order.purchaseDate)
        order.transactionID.withUnsafeBytes { h.combine(bytes: $0) }
    }

    static func == (a: PeriodKey, b: PeriodKey) -> Bool {
        a.subscription.environment == b.subscription.environment && a.order == b.order
            && a.subscription.bundleID == b.subscription.bundleID
            && a.subscription.originalTransactionID == b.subscription.originalTransactionID
    }
}

/// One period of an auto-renewable subscription (a `purchases` row with an expires_date): what the
/// `subscriptions`, `events` and `daily` tables need of it. Each key is one purchase, so records never merge.
struct PeriodRecord: Sendable {
    var key: PeriodKey
    var productID: [UInt8]
    var expiresDate: Int64?
    var cancellationDate: Int64?
    var cancellationReason: Int32?
    var isTrialPeriod: Bool
    var isInIntroOfferPeriod: Bool
    var hasPromotionalOffer: Bool
    /// The newest receipt creation date that shows the period.
    var lastSeen: Int64?
    /// The purchase's customer columns (`user_id`, `multiple_user_ids`, `app_account_token`).
    var userID: [UInt8]? = nil
    var multipleUserIDs: Bool? = nil
    var appAccountToken: [UInt8]? = nil

    var purchaseDate: Int64? { key.order.purchaseDate }
    var transactionID: [UInt8] { key.order.transactionID }

    /// The period a `purchases` row describes. Its byte strings equal to those of `previous` (the period before
    /// it in the purchases' row order, which mostly shares its bundle, subscription, product and customer) are
    /// shared with them instead of copied.
    init(_ record: PurchaseRecord, sharing previous: PeriodRecord? = nil) {
        let p = record.facts
        let transactionID = record.bytes(p.transactionID)
        let subscription = previous?.key.subscription
        key = PeriodKey(
            subscription: SubscriptionKey(
                environment: p.environment.rawValue,
                bundleID: record.bytes(p.bundleID, sharing: subscription?.bundleID),
                originalTransactionID: record.bytes(
                    p.originalTransactionID, sharing: subscription?.originalTransactionID)
                    ?? transactionID),
            order: PeriodOrder(purchaseDate: p.purchaseDate, transactionID: transactionID))
        productID = record.bytes(p.productID, sharing: previous?.productID)
        expiresDate = p.expiresDate
        cancellationDate = p.cancellationDate
        cancellationReason = p.cancellationDate == nil ? nil : p.cancellationReason
        isTrialPeriod = p.isTrialPeriod == true
        isInIntroOfferPeriod = p.isInIntroOfferPeriod == true
        hasPromotionalOffer = p.promotionalOfferID != nil
        lastSeen = record.lastSeen
        userID = record.bytes(p.userID, sharing: previous?.userID)
        multipleUserIDs = p.multipleUserIDs
        appAccountToken = record.bytes(p.appAccountToken, sharing: previous?.appAccountToken)
    }

    init(
        key: PeriodKey, productID: [UInt8], expiresDate: Int64?, cancellationDate: Int64?,
        cancellationReason: Int32?, isTrialPeriod: Bool, isInIntroOfferPeriod: Bool, hasPromotionalOffer: Bool,
        lastSeen: Int64?
    ) {
        self.key = key
        self.productID = productID
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.hasPromotionalOffer = hasPromotionalOffer
        self.lastSeen = lastSeen
    }
}

extension PeriodRecord: SpillRecord {
    var storeKey: PeriodKey { key }

    /// Keys are distinct purchases: a second record of a key is the same period.
    mutating func merge(_ other: PeriodRecord) {}

    var estimatedBytes: Int {
        MemoryLayout<PeriodRecord>.stride + 4 * 48 + key.subscription.bundleID.count
            + key.subscription.originalTransactionID.count + key.order.transactionID.count + productID.count
            + (userID?.count ?? 0) + (appAccountToken?.count ?? 0)
    }

    func partition(_ count: Int, seed: UInt64) -> Int {
        let s = key.subscription
        return Int(stableHash([s.environment], s.bundleID, s.originalTransactionID, seed: seed) % UInt64(count))
    }

    /// Subscriptions in their row order, each one's periods in rank order.
    static func precedes(_ a: PeriodRecord, _ b: PeriodRecord) -> Bool {
        let x = a.key.subscription
        let y = b.key.subscription
        if x.environment != y.environment { return x.environment < y.environment }
        var c = compareBytes(x.bundleID, y.bundleID)
        if c != 0 { return c < 0 }
        c = compareBytes(x.originalTransactionID, y.originalTransactionID)
        if c != 0 { return c < 0 }
        return a.key.order < b.key.order
    }

    func encode(into w: inout SpillWriter) {
        w.u8(key.subscription.environment)
        w.text(key.subscription.bundleID)
        w.text(key.subscription.originalTransactionID)
        key.order.encode(into: &w)
        w.text(productID)
        w.i64(expiresDate)
        w.i64(cancellationDate)
        w.i32(cancellationReason)
        w.bool(isTrialPeriod)
        w.bool(isInIntroOfferPeriod)
        w.bool(hasPromotionalOffer)
        w.i64(lastSeen)
        w.text(userID)
        w.bool(multipleUserIDs)
        w.text(appAccountToken)
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> PeriodRecord {
        let subscription = SubscriptionKey(
            environment: try r.u8(), bundleID: try r.text(), originalTransactionID: try r.text())
        let order = try PeriodOrder.decode(&r)
        var record = PeriodRecord(
            key: PeriodKey(subscription: subscription, order: order), productID: try r.text(),
            expiresDate: try r.optionalI64(), cancellationDate: try r.optionalI64(),
            cancellationReason: try r.optionalI32(), isTrialPeriod: try r.optionalBool() ?? false,
            isInIntroOfferPeriod: try r.optionalBool() ?? false, hasPromotionalOffer: try r.optionalBool() ?? false,
            lastSeen: try r.optionalI64())
        record.userID = try r.optionalText()
        record.multipleUserIDs = try r.optionalBool()
        record.appAccountToken = try r.optionalText()
        return record
    }
}

extension PurchaseRecord {
    /// The bytes of `s`: `shared` itself when it holds the same bytes (no copy is made), a copy otherwise.
    fileprivate func bytes(_ s: TextSpan, sharing shared: [UInt8]?) -> [UInt8] {
        guard let shared, shared.count == Int(s.count) else { return bytes(s) }
        let same = text.withUnsafeBytes { t in shared.withUnsafeBytes { compareBytes(t.span(s), $0) == 0 } }
        return same ? shared : bytes(s)
    }

    fileprivate func bytes(_ s: TextSpan?, sharing shared: [UInt8]?) -> [UInt8]? {
        s.map { bytes($0, sharing: shared) }
    }
}
