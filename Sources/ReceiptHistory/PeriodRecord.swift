import ReceiptModel

/// One period of an auto-renewable subscription (a `purchases` row with an expires_date): what the
/// `subscriptions`, `events` and `daily` tables need of it. Its byte strings are spans of `text`, which it shares
/// with the `purchases` record it was made from, so that making, copying and dropping a period touches one
/// reference count and allocates nothing. Each key is one purchase, so records never merge.
struct PeriodRecord: Sendable {
    /// The byte strings the spans name.
    var text: [UInt8]
    var environment: UInt8
    var bundleID: TextSpan
    /// The subscription's original_transaction_id: the period's own transaction_id when it has none.
    var originalTransactionID: TextSpan
    var transactionID: TextSpan
    var productID: TextSpan
    var purchaseDate: Int64?
    var expiresDate: Int64?
    var cancellationDate: Int64?
    var cancellationReason: Int32?
    var isTrialPeriod: Bool
    var isInIntroOfferPeriod: Bool
    var hasPromotionalOffer: Bool
    /// The newest receipt creation date that shows the period.
    var lastSeen: Int64?
    /// The purchase's customer columns (`user_id`, `multiple_user_ids`, `app_account_token`).
    var userID: TextSpan? = nil
    var multipleUserIDs: Bool? = nil
    var appAccountToken: TextSpan? = nil

    /// The period a `purchases` row describes.
    init(_ record: PurchaseRecord) {
        let p = record.facts
        text = record.text
        environment = p.environment.rawValue
        bundleID = p.bundleID
        transactionID = p.transactionID
        originalTransactionID = p.originalTransactionID ?? p.transactionID
        productID = p.productID
        purchaseDate = p.purchaseDate
        expiresDate = p.expiresDate
        cancellationDate = p.cancellationDate
        cancellationReason = p.cancellationDate == nil ? nil : p.cancellationReason
        isTrialPeriod = p.isTrialPeriod == true
        isInIntroOfferPeriod = p.isInIntroOfferPeriod == true
        hasPromotionalOffer = p.promotionalOfferID != nil
        lastSeen = record.lastSeen
        userID = p.userID
        multipleUserIDs = p.multipleUserIDs
        appAccountToken = p.appAccountToken
    }

    /// A period from its values (a decoded record, a test's).
    init(
        text: [UInt8], environment: UInt8, bundleID: TextSpan, originalTransactionID: TextSpan,
        transactionID: TextSpan, productID: TextSpan, purchaseDate: Int64?, expiresDate: Int64?,
        cancellationDate: Int64?, cancellationReason: Int32?, isTrialPeriod: Bool, isInIntroOfferPeriod: Bool,
        hasPromotionalOffer: Bool, lastSeen: Int64?
    ) {
        self.text = text
        self.environment = environment
        self.bundleID = bundleID
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.productID = productID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.hasPromotionalOffer = hasPromotionalOffer
        self.lastSeen = lastSeen
    }

    /// A copy of the bytes of `s`.
    func bytes(_ s: TextSpan) -> [UInt8] {
        text.withUnsafeBytes { Array($0.span(s)) }
    }

    func bytes(_ s: TextSpan?) -> [UInt8]? { s.map { bytes($0) } }

    /// The same period over a text of its own byte strings alone: for a period that is kept (held back or stored)
    /// while the purchases move on, so that it does not keep its purchase record's whole text alive.
    func compacted() -> PeriodRecord {
        var p = self
        var new: [UInt8] = []
        new.reserveCapacity(
            Int(bundleID.count + originalTransactionID.count + transactionID.count + productID.count)
                + Int(userID?.count ?? 0) + Int(appAccountToken?.count ?? 0))
        text.withUnsafeBytes { t in
            func copy(_ s: TextSpan) -> TextSpan {
                let moved = TextSpan(offset: Int32(new.count), count: s.count)
                new.append(contentsOf: t.span(s))
                return moved
            }
            p.bundleID = copy(bundleID)
            p.originalTransactionID = copy(originalTransactionID)
            p.transactionID = copy(transactionID)
            p.productID = copy(productID)
            p.userID = userID.map(copy)
            p.appAccountToken = appAccountToken.map(copy)
        }
        p.text = new
        return p
    }
}

/// Comparisons of the byte strings of two periods.
extension PeriodRecord {
    /// Compares span `x` of `a` with span `y` of `b`, bytewise.
    static func compare(_ a: PeriodRecord, _ x: TextSpan, _ b: PeriodRecord, _ y: TextSpan) -> Int {
        a.text.withUnsafeBytes { s in b.text.withUnsafeBytes { t in compareBytes(s.span(x), t.span(y)) } }
    }

    static func equal(_ a: PeriodRecord, _ x: TextSpan?, _ b: PeriodRecord, _ y: TextSpan?) -> Bool {
        guard let x, let y else { return x == nil && y == nil }
        return a.text.withUnsafeBytes { s in b.text.withUnsafeBytes { t in equalBytes(s.span(x), t.span(y)) } }
    }

    /// Whether `a` and `b` are periods of the same subscription.
    static func sameSubscription(_ a: PeriodRecord, _ b: PeriodRecord) -> Bool {
        a.environment == b.environment && equal(a, a.originalTransactionID, b, b.originalTransactionID)
            && equal(a, a.bundleID, b, b.bundleID)
    }

    /// Whether `a` and `b` have the same environment and bundle_id.
    static func sameBundle(_ a: PeriodRecord, _ b: PeriodRecord) -> Bool {
        a.environment == b.environment && equal(a, a.bundleID, b, b.bundleID)
    }

    /// Whether `a` ranks before `b` in a subscription: (purchase_date, transaction_id), a null date first.
    static func ranksBefore(_ a: PeriodRecord, _ b: PeriodRecord) -> Bool {
        switch (a.purchaseDate, b.purchaseDate) {
        case (nil, .some): return true
        case (.some, nil): return false
        case (let x?, let y?) where x != y: return x < y
        default: return compare(a, a.transactionID, b, b.transactionID) < 0
        }
    }

    /// Whether `a` and `b` have the same product_id.
    static func sameProduct(_ a: PeriodRecord, _ b: PeriodRecord) -> Bool {
        equal(a, a.productID, b, b.productID)
    }
}

/// The key of one period in the subscriptions pass's store: its subscription, then its rank; equal and hashed by
/// those bytes and values.
struct PeriodKey: Hashable, Sendable {
    var period: PeriodRecord

    func hash(into h: inout Hasher) {
        let p = period
        h.combine(p.environment)
        h.combine(p.purchaseDate)
        p.text.withUnsafeBytes { t in
            h.combine(bytes: t.span(p.bundleID))
            h.combine(Int(p.bundleID.count))
            h.combine(bytes: t.span(p.originalTransactionID))
            h.combine(Int(p.originalTransactionID.count))
            h.combine(bytes: t.span(p.transactionID))
        }
    }

    static func == (a: PeriodKey, b: PeriodKey) -> Bool {
        let x = a.period
        let y = b.period
        return x.purchaseDate == y.purchaseDate && PeriodRecord.equal(x, x.transactionID, y, y.transactionID)
            && PeriodRecord.sameSubscription(x, y)
    }
}

extension PeriodRecord: SpillRecord {
    var storeKey: PeriodKey { PeriodKey(period: self) }

    /// Keys are distinct purchases: a second record of a key is the same period.
    mutating func merge(_ other: PeriodRecord) {}

    /// Approximate heap bytes while held in a store's table, where the period is both the key (`PeriodKey`) and
    /// the value (one text shared): two values and the text's storage.
    var estimatedBytes: Int { 2 * MemoryLayout<PeriodRecord>.stride + text.storageBytes }

    func partition(_ count: Int, seed: UInt64) -> Int {
        text.withUnsafeBytes { t in
            Int(
                stableHash(environment, t.span(bundleID), t.span(originalTransactionID), seed: seed)
                    % UInt64(count))
        }
    }

    /// Subscriptions in their row order, each one's periods in rank order.
    static func precedes(_ a: PeriodRecord, _ b: PeriodRecord) -> Bool {
        if a.environment != b.environment { return a.environment < b.environment }
        var c = compare(a, a.bundleID, b, b.bundleID)
        if c != 0 { return c < 0 }
        c = compare(a, a.originalTransactionID, b, b.originalTransactionID)
        if c != 0 { return c < 0 }
        return ranksBefore(a, b)
    }

    func encode(into w: inout SpillWriter) {
        text.withUnsafeBytes { t in
            w.u8(environment)
            w.text(t.span(bundleID))
            w.text(t.span(originalTransactionID))
            w.i64(purchaseDate)
            w.text(t.span(transactionID))
            w.text(t.span(productID))
            w.i64(expiresDate)
            w.i64(cancellationDate)
            w.i32(cancellationReason)
            w.bool(isTrialPeriod)
            w.bool(isInIntroOfferPeriod)
            w.bool(hasPromotionalOffer)
            w.i64(lastSeen)
            w.text(userID.map { t.span($0) })
            w.bool(multipleUserIDs)
            w.text(appAccountToken.map { t.span($0) })
        }
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> PeriodRecord {
        var text: [UInt8] = []
        let environment = try r.u8()
        let bundleID = try r.text(into: &text)
        let originalTransactionID = try r.text(into: &text)
        let purchaseDate = try r.optionalI64()
        let transactionID = try r.text(into: &text)
        let productID = try r.text(into: &text)
        let expiresDate = try r.optionalI64()
        let cancellationDate = try r.optionalI64()
        let cancellationReason = try r.optionalI32()
        let isTrialPeriod = try r.optionalBool() ?? false
        let isInIntroOfferPeriod = try r.optionalBool() ?? false
        let hasPromotionalOffer = try r.optionalBool() ?? false
        let lastSeen = try r.optionalI64()
        let userID = try r.optionalText(into: &text)
        let multipleUserIDs = try r.optionalBool()
        let appAccountToken = try r.optionalText(into: &text)
        var record = PeriodRecord(
            text: text, environment: environment, bundleID: bundleID, originalTransactionID: originalTransactionID,
            transactionID: transactionID, productID: productID, purchaseDate: purchaseDate, expiresDate: expiresDate,
            cancellationDate: cancellationDate, cancellationReason: cancellationReason, isTrialPeriod: isTrialPeriod,
            isInIntroOfferPeriod: isInIntroOfferPeriod, hasPromotionalOffer: hasPromotionalOffer, lastSeen: lastSeen)
        record.userID = userID
        record.multipleUserIDs = multipleUserIDs
        record.appAccountToken = appAccountToken
        return record
    }
}
