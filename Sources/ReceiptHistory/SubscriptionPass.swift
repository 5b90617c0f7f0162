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
    /// The period whose product was looked up last, and its index.
    private var lastProduct: (PeriodRecord, Int)? = nil

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

    /// Takes the next purchase with an expires_date (in the purchases' row order).
    func add(_ p: PurchaseRecord) throws(HistoryError) {
        if let d = p.facts.purchaseDate { daily.sawPurchase(d) }
        try stream.add(PeriodRecord(p), originalID: p.facts.originalTransactionID != nil) { q throws(HistoryError) in
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
        if let first = group.first, !PeriodRecord.sameSubscription(first, p) { try subscription() }
        group.append(p)
    }

    /// Ends the subscription whose periods are `group`.
    private func subscription() throws(HistoryError) {
        guard !group.isEmpty else { return }
        let s = SubscriptionRecord(group, asOf: stateTime)
        let renewal = renewal(of: group[0])
        try subscriptionRows.append(s, of: group, renewal: renewal, asOf: stateTime)
        productIndexes.removeAll(keepingCapacity: true)
        for i in group.indices {
            if i > 0 && PeriodRecord.sameProduct(group[i], group[i - 1]) {
                productIndexes.append(productIndexes[i - 1])
            } else {
                productIndexes.append(productIndex(group[i]))
            }
        }
        byState[s.state(asOf: stateTime, renewal: renewal), default: 0] += 1
        for e in subscriptionEvents(group, observedThrough: s.observedThrough, renewal: renewal) {
            try eventRows.append(event: e, of: group, user: s.user)
            if let a = asOf, e.date <= a {
                daily.add(e.kind.flow, day: DayRange.day(e.date), productIndex: productIndexes[e.period], 1)
            }
        }
        if let a = asOf {
            let indexes = productIndexes
            sweepSubscriptionStates(
                group, observedThrough: s.observedThrough, renewal: renewal, days: DayRange(asOf: a)
            ) { day, old, new in
                daily.move(day: day, from: old, to: new) { indexes[$0] }
            }
        }
        group.removeAll(keepingCapacity: true)
    }

    /// The newest renewal info of the subscription `p` belongs to.
    private func renewal(of p: PeriodRecord) -> RenewalRecord? {
        if newestRenewal.isEmpty { return nil }
        return newestRenewal[
            RenewalKey(environment: p.environment, originalTransactionID: p.bytes(p.originalTransactionID))]
    }

    /// The `daily` product index of `p`'s product; the last one looked up is kept, since consecutive subscriptions
    /// mostly share a product.
    private func productIndex(_ p: PeriodRecord) -> Int {
        if let (q, index) = lastProduct, PeriodRecord.sameBundle(p, q), PeriodRecord.sameProduct(p, q) { return index }
        let index = daily.index(product(p))
        lastProduct = (p, index)
        return index
    }
}
