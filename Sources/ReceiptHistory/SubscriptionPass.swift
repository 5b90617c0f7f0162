/// The subscriptions pass of the history's end: takes the purchases that are periods (those with an
/// expires_date) in the purchases' row order, puts their periods in subscription and rank order (`PeriodStream`),
/// and writes each subscription's `subscriptions` row and `events` rows and counts its changes to `daily`.
///
/// Used from one thread at a time (the collector hands it batches of purchases on a queue of its own, and takes
/// it back when the queue is idle).
final class SubscriptionPass {
    private let asOf: Int64?
    /// The time `state` is judged at (`asOf`, or the earliest time when there is none).
    private let stateTime: Int64
    /// The newest renewal info per key (one per subscription at most that matches, far fewer than purchases).
    private let newestRenewal: [RenewalKey: RenewalRecord]
    private var stream: PeriodStream
    private(set) var subscriptionRows: HistoryTableBuffer
    private(set) var eventRows: HistoryTableBuffer
    private(set) var daily = DailyActivity()
    /// Rows of `subscriptions` by their `state`.
    private(set) var byState: [String: Int64] = [:]
    /// The periods of the current subscription, in rank order.
    private var group: [PeriodRecord] = []
    /// The `daily` product index of each period of `group` (periods of one product share a lookup).
    private var productIndexes: [Int] = []

    init(
        asOf: Int64?, newestRenewal: [RenewalKey: RenewalRecord], periods: SpillStore<PeriodRecord>,
        subscriptionRows: HistoryTableBuffer, eventRows: HistoryTableBuffer
    ) {
        self.asOf = asOf
        stateTime = asOf ?? Int64.min
        self.newestRenewal = newestRenewal
        stream = PeriodStream(store: periods)
        self.subscriptionRows = subscriptionRows
        self.eventRows = eventRows
    }

    /// The period of the purchase before (whose byte strings the next period shares where they are equal).
    private var previous: PeriodRecord? = nil

    /// Takes the next purchase with an expires_date (in the purchases' row order).
    func add(_ p: PurchaseRecord) throws(HistoryError) {
        if let d = p.facts.purchaseDate { daily.sawPurchase(d) }
        let record = PeriodRecord(p, sharing: previous)
        previous = record
        try stream.add(record, originalID: p.facts.originalTransactionID != nil) { q throws(HistoryError) in
            try period(q)
        }
    }

    /// Gives on the periods still held, ends the last subscription, and hands the last `subscriptions` and
    /// `events` rows to their writers, waiting until they are written.
    func finish() throws(HistoryError) {
        try stream.finish { q throws(HistoryError) in try period(q) }
        try subscription()
        try subscriptionRows.drain()
        try eventRows.drain()
    }

    private func period(_ p: PeriodRecord) throws(HistoryError) {
        if let first = group.first, first.key.subscription != p.key.subscription { try subscription() }
        group.append(p)
    }

    /// Ends the subscription whose periods are `group`.
    private func subscription() throws(HistoryError) {
        guard !group.isEmpty else { return }
        var s = SubscriptionRecord(period: group[0], asOf: stateTime)
        for i in group.indices.dropFirst() { s.merge(period: group[i], asOf: stateTime) }
        let renewal = newestRenewal[
            RenewalKey(environment: s.key.environment, originalTransactionID: s.key.originalTransactionID)]
        try subscriptionRows.append(s, renewal: renewal, asOf: stateTime)
        productIndexes.removeAll(keepingCapacity: true)
        for i in group.indices {
            if i > 0 && group[i].productID == group[i - 1].productID {
                productIndexes.append(productIndexes[i - 1])
            } else {
                productIndexes.append(daily.index(product(group[i])))
            }
        }
        byState[s.state(asOf: stateTime, renewal: renewal), default: 0] += 1
        for e in subscriptionEvents(group, observedThrough: s.observedThrough, renewal: renewal) {
            try eventRows.append(event: e, of: group, user: s.userID)
            if let a = asOf, e.date <= a {
                daily.add(e.kind.flow, day: DayRange.day(e.date), productIndex: productIndexes[e.period], 1)
            }
        }
        if let a = asOf {
            let indexes = productIndexes
            sweepSubscriptionStates(
                group, key: s.key, observedThrough: s.observedThrough, renewal: renewal, days: DayRange(asOf: a)
            ) { day, old, new in
                daily.move(day: day, from: old, to: new) { indexes[$0] }
            }
        }
        group.removeAll(keepingCapacity: true)
    }
}
