import ReceiptModel

/// The kinds of `events` rows (docs/history.md, "Subscription events").
enum SubscriptionEventKind: Int, CaseIterable, Sendable {
    case subscribe, startTrial, startIntroOffer, startPromotionalOffer, reactivate, convert, renew, productChange
    case refund, expire

    /// The `event` column's value.
    var name: String { staticName.description }

    /// The `event` column's value, as written.
    var staticName: StaticString {
        switch self {
        case .subscribe: return "subscribe"
        case .startTrial: return "start_trial"
        case .startIntroOffer: return "start_intro_offer"
        case .startPromotionalOffer: return "start_promotional_offer"
        case .reactivate: return "reactivate"
        case .convert: return "convert"
        case .renew: return "renew"
        case .productChange: return "product_change"
        case .refund: return "refund"
        case .expire: return "expire"
        }
    }

    /// The kind's place among the kinds in the bytewise order of their names (the `events` rows' order on one
    /// date).
    var nameRank: Int { Self.nameRanks[rawValue] }

    private static let nameRanks: [Int] = {
        let byName = allCases.sorted { a, b in
            a.staticName.withUTF8Buffer { x in b.staticName.withUTF8Buffer { x.lexicographicallyPrecedes($0) } }
        }
        var ranks = [Int](repeating: 0, count: allCases.count)
        for (rank, kind) in byName.enumerated() { ranks[kind.rawValue] = rank }
        return ranks
    }()

    /// The `daily` flow column that counts the kind.
    var flow: DailyColumn {
        switch self {
        case .subscribe, .startTrial, .startIntroOffer, .startPromotionalOffer: return .starts
        case .reactivate: return .reactivations
        case .convert: return .conversions
        case .renew: return .renewals
        case .productChange: return .productChanges
        case .refund: return .refunds
        case .expire: return .expirations
        }
    }
}

/// One `events` row of a subscription; `period` indexes the subscription's periods in rank order (0-based).
struct SubscriptionEvent: Sendable {
    var date: Int64
    var kind: SubscriptionEventKind
    var period: Int
    var previousPeriod: Int?
    /// Whether the row carries the period's offer (every kind but `refund` and `expire`).
    var withOffer: Bool
}

/// The events of one subscription from its periods in rank order: starts, reactivations, conversions, renewals,
/// product changes, refunds and proven expiries, as docs/history.md defines them. The result is in the row order
/// of `events` within the subscription.
func subscriptionEvents(
    _ periods: [PeriodRecord], observedThrough: Int64?, renewal: RenewalRecord?
) -> [SubscriptionEvent] {
    var events: [SubscriptionEvent] = []
    // Runs of uninterrupted service: indexes of the periods that give service, in rank order.
    var runs: [(periods: [Int], end: Int64)] = []
    for i in periods.indices {
        guard let start = periods[i].purchaseDate, let end = serviceEnd(periods[i]), end > start else { continue }
        if let last = runs.last, start <= last.end {
            runs[runs.count - 1].periods.append(i)
            runs[runs.count - 1].end = max(last.end, end)
        } else {
            runs.append(([i], end))
        }
    }
    for (r, run) in runs.enumerated() {
        let first = run.periods[0]
        let start = periods[first].purchaseDate!
        if r == 0 {
            events.append(
                SubscriptionEvent(
                    date: start, kind: startKind(periods[first]), period: first, previousPeriod: nil, withOffer: true))
        } else {
            events.append(
                SubscriptionEvent(
                    date: start, kind: .reactivate, period: first, previousPeriod: runs[r - 1].periods.last,
                    withOffer: true))
        }
        for k in run.periods.indices.dropFirst() {
            let p = run.periods[k]
            let q = run.periods[k - 1]
            let kind: SubscriptionEventKind
            var previous: Int? = q
            if (periods[q].isTrialPeriod || periods[q].isInIntroOfferPeriod)
                && !(periods[p].isTrialPeriod || periods[p].isInIntroOfferPeriod)
            {
                kind = .convert
            } else if !PeriodRecord.sameProduct(periods[p], periods[q]) {
                kind = .productChange
            } else {
                kind = .renew
                previous = nil
            }
            events.append(
                SubscriptionEvent(
                    date: periods[p].purchaseDate!, kind: kind, period: p, previousPeriod: previous,
                    withOffer: true))
        }
        let last = run.periods.last!
        let known =
            r < runs.count - 1 || periods[last].cancellationDate != nil
            || (observedThrough.map { $0 >= run.end } ?? false)
            || (r == runs.count - 1 && renewal?.expirationIntent != nil
                && (renewal?.signedDate.map { $0 >= run.end } ?? false))
        if known {
            events.append(
                SubscriptionEvent(date: run.end, kind: .expire, period: last, previousPeriod: nil, withOffer: false))
        }
    }
    for i in periods.indices where periods[i].purchaseDate != nil && periods[i].cancellationReason != nil {
        if let c = periods[i].cancellationDate {
            events.append(SubscriptionEvent(date: c, kind: .refund, period: i, previousPeriod: nil, withOffer: false))
        }
    }
    events.sort { a, b in
        if a.date != b.date { return a.date < b.date }
        if a.kind != b.kind { return a.kind.nameRank < b.kind.nameRank }
        let x = periods[a.period]
        let y = periods[b.period]
        return PeriodRecord.compare(x, x.transactionID, y, y.transactionID) < 0
    }
    return events
}

/// The end of a period's service: its expires_date, or its cancellation_date when that is earlier.
func serviceEnd(_ p: PeriodRecord) -> Int64? {
    guard let e = p.expiresDate else { return nil }
    if let c = p.cancellationDate, c < e { return c }
    return e
}

private func startKind(_ p: PeriodRecord) -> SubscriptionEventKind {
    if p.isTrialPeriod { return .startTrial }
    if p.isInIntroOfferPeriod { return .startIntroOffer }
    if p.hasPromotionalOffer { return .startPromotionalOffer }
    return .subscribe
}

/// offer(p): `free_trial`, `introductory`, `promotional` or nil (the period read in place).
func offerStaticName(_ p: UnsafePointer<PeriodRecord>) -> StaticString? {
    if p.pointee.isTrialPeriod { return "free_trial" }
    if p.pointee.isInIntroOfferPeriod { return "introductory" }
    if p.pointee.hasPromotionalOffer { return "promotional" }
    return nil
}
