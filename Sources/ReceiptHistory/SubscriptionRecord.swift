import ReceiptModel

/// One `subscriptions` row: what its periods (purchases rows with an expires_date, the same original_transaction_id
/// or, without one, the transaction's own id) make of it, with what the state at the as-of time `A` needs. The
/// periods are in rank order, (purchase_date, transaction_id) with a null date first; the row's byte strings are
/// those of the periods named by index (`first`, `latest`, `user`, `token`), read in place when the row is written.
struct SubscriptionRecord {
    /// The period with the least and the greatest rank.
    var first: Int
    var latest: Int
    var firstPurchaseDate: Int64?
    var latestPurchaseDate: Int64?
    /// Max expires_date over periods without a cancellation date.
    var latestExpiresDate: Int64?
    var periods: Int64 = 0
    var trialPeriods: Int64 = 0
    var introPeriods: Int64 = 0
    var cancelledPeriods: Int64 = 0
    var observedThrough: Int64?
    // State at A: only periods purchased at or before A count; a cancellation counts when dated at or before A.
    var counted = false
    /// Some counted, uncancelled period has purchase_date <= A < expires_date.
    var activeAtA = false
    /// Whether the counted period with the greatest rank is cancelled at A, and its purchase_date.
    var latestCountedCancelled = false
    var latestCountedPurchaseDate: Int64?
    /// Max expires_date of the counted periods not cancelled at A.
    var countedExpires: Int64?
    /// The customer: the period of greatest rank with a user id and the one with an app account token, and
    /// whether some period has several user ids or two periods have different ones (nil without `--user-field`).
    var user: Int?
    var token: Int?
    var multipleUserIDs: Bool?

    /// The subscription of `group`'s periods (at least one, in rank order), with its state at `a`.
    init(_ group: [PeriodRecord], asOf a: Int64) {
        first = 0
        latest = group.count - 1
        multipleUserIDs = group[0].multipleUserIDs
        for i in group.indices {
            let p = group[i]
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
            if isCounted {
                counted = true
                if !cancelledAtA && a < (p.expiresDate ?? Int64.min) { activeAtA = true }
                latestCountedCancelled = cancelledAtA
                latestCountedPurchaseDate = p.purchaseDate
                if !cancelledAtA { countedExpires = maxOptional(countedExpires, p.expiresDate) }
            }
            if i > 0, let b = p.multipleUserIDs {
                if let m = multipleUserIDs {
                    let differ =
                        user.map { p.userID != nil && !PeriodRecord.equal(group[$0], group[$0].userID, p, p.userID) }
                        ?? false
                    multipleUserIDs = m || b || differ
                } else {
                    multipleUserIDs = b
                }
            }
            if p.userID != nil { user = i }
            if p.appAccountToken != nil { token = i }
        }
    }

    /// What the state depends on.
    var stateFacts: SubscriptionStateFacts {
        SubscriptionStateFacts(
            counted: counted, activeAtA: activeAtA, latestCountedCancelled: latestCountedCancelled,
            latestCountedPurchaseDate: latestCountedPurchaseDate, countedExpires: countedExpires,
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
