import ReceiptModel

/// The key of a `subscriptions` row: the period's original_transaction_id, or its transaction_id when that is
/// null.
struct SubscriptionKey: Hashable, Sendable {
    var environment: UInt8
    var bundleID: [UInt8]
    var originalTransactionID: [UInt8]

    /// Hashes the byte strings as blocks (the synthesized hash feeds the hasher one byte at a time).
    func hash(into h: inout Hasher) {
        h.combine(environment)
        bundleID.withUnsafeBytes { h.combine(bytes: $0) }
        h.combine(bundleID.count)
        originalTransactionID.withUnsafeBytes { h.combine(bytes: $0) }
    }
}

/// A period's place in "first" and "latest": (purchase_date, transaction_id), a null date first.
struct PeriodOrder: Comparable, Sendable {
    var purchaseDate: Int64?
    var transactionID: [UInt8]

    static func < (a: PeriodOrder, b: PeriodOrder) -> Bool {
        switch (a.purchaseDate, b.purchaseDate) {
        case (nil, .some): return true
        case (.some, nil): return false
        case (let x?, let y?) where x != y: return x < y
        default: return compareBytes(a.transactionID, b.transactionID) < 0
        }
    }

    static func == (a: PeriodOrder, b: PeriodOrder) -> Bool {
        a.purchaseDate == b.purchaseDate && a.transactionID == b.transactionID
    }

    func encode(into w: inout SpillWriter) {
        w.i64(purchaseDate)
        w.text(transactionID)
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> PeriodOrder {
        PeriodOrder(purchaseDate: try r.optionalI64(), transactionID: try r.text())
    }
}

/// One `subscriptions` row in the making: the merge of its periods (purchases rows with an expires_date), with
/// what the state at the as-of time `A` needs. Every field merges by min, max, sum or "or", so the merge is
/// associative and commutative.
struct SubscriptionRecord: Sendable {
    var key: SubscriptionKey
    var first: PeriodOrder
    var firstProductID: [UInt8]
    var latest: PeriodOrder
    var latestProductID: [UInt8]
    var firstPurchaseDate: Int64?
    var latestPurchaseDate: Int64?
    /// Max expires_date over periods without a cancellation date.
    var latestExpiresDate: Int64?
    var periods: Int64
    var trialPeriods: Int64
    var introPeriods: Int64
    var cancelledPeriods: Int64
    var observedThrough: Int64?
    // State at A: only periods purchased at or before A count; a cancellation counts when dated at or before A.
    var counted: Bool
    /// Some counted, uncancelled period has purchase_date <= A < expires_date.
    var activeAtA: Bool
    /// The counted period with the greatest (purchase_date, transaction_id), and whether it is cancelled at A.
    var latestCounted: PeriodOrder?
    var latestCountedCancelled: Bool
    /// Max expires_date of the counted periods not cancelled at A.
    var countedExpires: Int64?
    /// The customer: the user id and app account token of the greatest period (by `PeriodOrder`) that has one,
    /// and whether some period has several user ids or two periods have different ones (nil without
    /// `--user-field`). As for purchases, a side whose flag is false has one distinct user id at most.
    var userID: [UInt8]? = nil
    var userRank: PeriodOrder? = nil
    var multipleUserIDs: Bool? = nil
    var appAccountToken: [UInt8]? = nil
    var tokenRank: PeriodOrder? = nil

    /// The period a `purchases` row describes (its expires_date must not be null).
    init(period record: PurchaseRecord, asOf a: Int64) {
        self.init(period: PeriodRecord(record), asOf: a)
    }

    /// The subscription of one period, with its state at `a`.
    init(period p: PeriodRecord, asOf a: Int64) {
        key = p.key.subscription
        let order = p.key.order
        first = order
        latest = order
        firstProductID = p.productID
        latestProductID = p.productID
        firstPurchaseDate = p.purchaseDate
        latestPurchaseDate = p.purchaseDate
        latestExpiresDate = p.cancellationDate == nil ? p.expiresDate : nil
        periods = 1
        trialPeriods = p.isTrialPeriod ? 1 : 0
        introPeriods = p.isInIntroOfferPeriod ? 1 : 0
        cancelledPeriods = p.cancellationDate == nil ? 0 : 1
        observedThrough = p.lastSeen
        let isCounted = p.purchaseDate.map { $0 <= a } ?? false
        let cancelledAtA = p.cancellationDate.map { $0 <= a } ?? false
        counted = isCounted
        let expires = p.expiresDate ?? Int64.min
        activeAtA = isCounted && !cancelledAtA && a < expires
        latestCounted = isCounted ? order : nil
        latestCountedCancelled = isCounted && cancelledAtA
        countedExpires = isCounted && !cancelledAtA ? p.expiresDate : nil
        userID = p.userID
        userRank = userID == nil ? nil : order
        multipleUserIDs = p.multipleUserIDs
        appAccountToken = p.appAccountToken
        tokenRank = appAccountToken == nil ? nil : order
    }

    init(
        key: SubscriptionKey, first: PeriodOrder, firstProductID: [UInt8], latest: PeriodOrder,
        latestProductID: [UInt8], firstPurchaseDate: Int64?, latestPurchaseDate: Int64?, latestExpiresDate: Int64?,
        periods: Int64, trialPeriods: Int64, introPeriods: Int64, cancelledPeriods: Int64, observedThrough: Int64?,
        counted: Bool, activeAtA: Bool, latestCounted: PeriodOrder?, latestCountedCancelled: Bool,
        countedExpires: Int64?
    ) {
        self.key = key
        self.first = first
        self.firstProductID = firstProductID
        self.latest = latest
        self.latestProductID = latestProductID
        self.firstPurchaseDate = firstPurchaseDate
        self.latestPurchaseDate = latestPurchaseDate
        self.latestExpiresDate = latestExpiresDate
        self.periods = periods
        self.trialPeriods = trialPeriods
        self.introPeriods = introPeriods
        self.cancelledPeriods = cancelledPeriods
        self.observedThrough = observedThrough
        self.counted = counted
        self.activeAtA = activeAtA
        self.latestCounted = latestCounted
        self.latestCountedCancelled = latestCountedCancelled
        self.countedExpires = countedExpires
    }

    mutating func merge(_ o: SubscriptionRecord) {
        if o.first < first {
            first = o.first
            firstProductID = o.firstProductID
        }
        if latest < o.latest {
            latest = o.latest
            latestProductID = o.latestProductID
        }
        firstPurchaseDate = minOptional(firstPurchaseDate, o.firstPurchaseDate)
        latestPurchaseDate = maxOptional(latestPurchaseDate, o.latestPurchaseDate)
        latestExpiresDate = maxOptional(latestExpiresDate, o.latestExpiresDate)
        periods += o.periods
        trialPeriods += o.trialPeriods
        introPeriods += o.introPeriods
        cancelledPeriods += o.cancelledPeriods
        observedThrough = maxOptional(observedThrough, o.observedThrough)
        counted = counted || o.counted
        activeAtA = activeAtA || o.activeAtA
        if let c = o.latestCounted, latestCounted.map({ $0 < c }) ?? true {
            latestCounted = c
            latestCountedCancelled = o.latestCountedCancelled
        }
        countedExpires = maxOptional(countedExpires, o.countedExpires)
        mergeCustomer(o)
    }

    /// `merge(SubscriptionRecord(period: p, asOf: a))`, without making that record (whose byte strings would
    /// each be retained and released).
    mutating func merge(period p: PeriodRecord, asOf a: Int64) {
        if p.key.order < first {
            first = p.key.order
            firstProductID = p.productID
        }
        if latest < p.key.order {
            latest = p.key.order
            latestProductID = p.productID
        }
        firstPurchaseDate = minOptional(firstPurchaseDate, p.purchaseDate)
        latestPurchaseDate = maxOptional(latestPurchaseDate, p.purchaseDate)
        latestExpiresDate = maxOptional(latestExpiresDate, p.cancellationDate == nil ? p.expiresDate : nil)
        periods += 1
        if p.isTrialPeriod { trialPeriods += 1 }
        if p.isInIntroOfferPeriod { introPeriods += 1 }
        if p.cancellationDate != nil { cancelledPeriods += 1 }
        observedThrough = maxOptional(observedThrough, p.lastSeen)
        let isCounted = p.purchaseDate.map { $0 <= a } ?? false
        let cancelledAtA = p.cancellationDate.map { $0 <= a } ?? false
        counted = counted || isCounted
        activeAtA = activeAtA || (isCounted && !cancelledAtA && a < (p.expiresDate ?? Int64.min))
        if isCounted, latestCounted.map({ $0 < p.key.order }) ?? true {
            latestCounted = p.key.order
            latestCountedCancelled = cancelledAtA
        }
        countedExpires = maxOptional(countedExpires, isCounted && !cancelledAtA ? p.expiresDate : nil)
        if let b = p.multipleUserIDs {
            if let m = multipleUserIDs {
                let differ = userID != nil && p.userID != nil && userID != p.userID
                multipleUserIDs = m || b || differ
            } else {
                multipleUserIDs = b
            }
        }
        if p.userID != nil, userRank.map({ $0 < p.key.order }) ?? true {
            userID = p.userID
            userRank = p.key.order
        }
        if p.appAccountToken != nil, tokenRank.map({ $0 < p.key.order }) ?? true {
            appAccountToken = p.appAccountToken
            tokenRank = p.key.order
        }
    }

    /// The customer's columns of the merge with `o`.
    private mutating func mergeCustomer(_ o: SubscriptionRecord) {
        if let b = o.multipleUserIDs {
            if let a = multipleUserIDs {
                let differ = userID != nil && o.userID != nil && userID != o.userID
                multipleUserIDs = a || b || differ
            } else {
                multipleUserIDs = b
            }
        }
        if let r = o.userRank, userRank.map({ $0 < r }) ?? true {
            userID = o.userID
            userRank = r
        }
        if let r = o.tokenRank, tokenRank.map({ $0 < r }) ?? true {
            appAccountToken = o.appAccountToken
            tokenRank = r
        }
    }

    /// What the state depends on.
    var stateFacts: SubscriptionStateFacts {
        SubscriptionStateFacts(
            counted: counted, activeAtA: activeAtA, latestCountedCancelled: latestCountedCancelled,
            latestCountedPurchaseDate: latestCounted?.purchaseDate, countedExpires: countedExpires,
            observedThrough: observedThrough)
    }

    /// The state at A; the first rule that matches wins.
    var state: String { stateFacts.state }

    /// The state at `a` refined by `n`, the newest renewal info of the row's environment and
    /// original_transaction_id (docs/history.md, "Renewal infos (JWS)"); `state` when `n` is nil.
    func state(asOf a: Int64, renewal n: RenewalRecord?) -> String { stateFacts.state(asOf: a, renewal: n) }
}

/// The fields of a `SubscriptionRecord` its state at A depends on (no byte strings: the state is judged at every
/// instant of a subscription's timeline).
struct SubscriptionStateFacts {
    var counted: Bool
    var activeAtA: Bool
    var latestCountedCancelled: Bool
    /// The purchase_date of the counted period with the greatest (purchase_date, transaction_id).
    var latestCountedPurchaseDate: Int64?
    var countedExpires: Int64?
    var observedThrough: Int64?

    /// `SubscriptionRecord.state`.
    var state: String {
        if !counted { return "not_started" }
        if activeAtA { return "active" }
        if latestCountedCancelled { return "revoked" }
        if let e = countedExpires, let seen = observedThrough, seen >= e { return "expired" }
        return "unknown"
    }

    /// `SubscriptionRecord.state(asOf:renewal:)`.
    func state(asOf a: Int64, renewal n: RenewalRecord?) -> String {
        guard let n, let signed = n.signedDate, counted, !activeAtA, !latestCountedCancelled,
            let newestPeriod = latestCountedPurchaseDate, signed <= a, signed >= newestPeriod
        else { return state }
        if n.isInBillingRetryPeriod == true {
            if let g = n.gracePeriodExpiresDate, a < g { return "grace_period" }
            return "billing_retry"
        }
        if let e = countedExpires, let seen = observedThrough, seen >= e { return "expired" }
        if n.expirationIntent != nil, let e = countedExpires, signed >= e { return "expired" }
        return "unknown"
    }
}

func minOptional(_ a: Int64?, _ b: Int64?) -> Int64? {
    guard let a else { return b }
    guard let b else { return a }
    return min(a, b)
}

func maxOptional(_ a: Int64?, _ b: Int64?) -> Int64? {
    guard let a else { return b }
    guard let b else { return a }
    return max(a, b)
}
