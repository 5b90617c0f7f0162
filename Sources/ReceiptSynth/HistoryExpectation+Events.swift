import ReceiptModel

/// The `events` and `daily` tables the export must write for generated receipts, from the expected purchases
/// (`HistoryExpectation`) by the rules of the events contract, stated directly: the state of every subscription is
/// judged afresh at every day's snapshot time. Meant for test-sized corpora.
extension HistoryExpectation {
    /// One `events` row.
    struct Event: Sendable {
        var environment: String
        var bundleID: String
        var originalTransactionID: String
        var date: Int64
        var event: String
        var transactionID: String
        var productID: String
        var previousProductID: String?
        var offer: String?
        var period: Int64
        var cancellationReason: Int64?
    }

    /// One `daily` row: the thirteen counts in column order.
    struct Daily: Sendable {
        var day: Int64
        var environment: String
        var bundleID: String
        var productID: String
        var counts: [Int64]
    }

    static let snapshotColumns = ["active", "active_trial", "active_intro", "grace_period", "billing_retry", "unknown"]
    static let flowColumns = [
        "starts", "reactivations", "conversions", "renewals", "product_changes", "refunds", "expirations",
    ]

    /// The `events` table as the export writes it in CSV.
    public func eventsCSV() -> String { HistoryCSV.events(eventRows()) }

    /// The `daily` table at as-of time `asOf` as the export writes it in CSV.
    public func dailyCSV(asOf: Int64?) -> String { HistoryCSV.daily(dailyRows(asOf: asOf)) }

    /// The periods of every subscription, each in rank order, subscriptions in row order.
    func subscriptionPeriods() -> [(key: Key, periods: [Purchase])] {
        var groups: [Key: [Purchase]] = [:]
        for p in purchases.values where p.facts.expiresDate != nil {
            let id = p.facts.originalTransactionID ?? p.key.transactionID
            groups[Key(environment: p.key.environment, bundleID: p.key.bundleID, transactionID: id), default: []]
                .append(p)
        }
        return groups.map { ($0.key, $0.value.sorted(by: Self.rankOrder)) }.sorted { a, b in
            if a.key.environment != b.key.environment { return bytes(a.key.environment, b.key.environment) }
            if a.key.bundleID != b.key.bundleID { return bytes(a.key.bundleID, b.key.bundleID) }
            return bytes(a.key.transactionID, b.key.transactionID)
        }
    }

    static func rankOrder(_ a: Purchase, _ b: Purchase) -> Bool {
        switch (a.facts.purchaseDate, b.facts.purchaseDate) {
        case (nil, .some): return true
        case (.some, nil): return false
        case (let x?, let y?) where x != y: return x < y
        default: return bytes(a.key.transactionID, b.key.transactionID)
        }
    }

    /// When service of `p` ends: its expiry, or its cancellation when earlier.
    static func end(_ p: Purchase) -> Int64 {
        let e = p.facts.expiresDate!
        guard let c = p.cancellation?.date else { return e }
        return min(c, e)
    }

    static func offer(_ p: Purchase) -> String? {
        if p.facts.isTrialPeriod == true { return "free_trial" }
        if p.facts.isInIntroOfferPeriod == true { return "introductory" }
        if p.facts.promotionalOfferID != nil { return "promotional" }
        return nil
    }

    static func discounted(_ p: Purchase) -> Bool {
        p.facts.isTrialPeriod == true || p.facts.isInIntroOfferPeriod == true
    }

    /// The `events` rows in the contract's order.
    func eventRows() -> [Event] {
        var rows: [Event] = []
        for (key, periods) in subscriptionPeriods() {
            let observed = periods.map(\.lastSeen).max()!
            var events: [Event] = []
            func add(_ name: String, _ date: Int64, _ i: Int, previous: Int? = nil, offer: Bool) {
                let p = periods[i]
                events.append(
                    Event(
                        environment: key.environment, bundleID: key.bundleID, originalTransactionID: key.transactionID,
                        date: date, event: name, transactionID: p.key.transactionID, productID: p.facts.productID,
                        previousProductID: previous.map { periods[$0].facts.productID },
                        offer: offer ? Self.offer(p) : nil, period: Int64(i + 1),
                        cancellationReason: name == "refund" ? p.cancellation?.reason : nil))
            }
            // Runs: each period that gives service joins the run before it when it starts by that run's end.
            var runs: [[Int]] = []
            var runEnds: [Int64] = []
            for i in periods.indices {
                guard let start = periods[i].facts.purchaseDate, Self.end(periods[i]) > start else { continue }
                if let e = runEnds.last, start <= e {
                    runs[runs.count - 1].append(i)
                    runEnds[runEnds.count - 1] = max(e, Self.end(periods[i]))
                } else {
                    runs.append([i])
                    runEnds.append(Self.end(periods[i]))
                }
            }
            for (r, run) in runs.enumerated() {
                let head = periods[run[0]]
                let start = head.facts.purchaseDate!
                if r > 0 {
                    add("reactivate", start, run[0], previous: runs[r - 1].last!, offer: true)
                } else if head.facts.isTrialPeriod == true {
                    add("start_trial", start, run[0], offer: true)
                } else if head.facts.isInIntroOfferPeriod == true {
                    add("start_intro_offer", start, run[0], offer: true)
                } else if head.facts.promotionalOfferID != nil {
                    add("start_promotional_offer", start, run[0], offer: true)
                } else {
                    add("subscribe", start, run[0], offer: true)
                }
                for (q, p) in zip(run, run.dropFirst()) {
                    let date = periods[p].facts.purchaseDate!
                    if Self.discounted(periods[q]) && !Self.discounted(periods[p]) {
                        add("convert", date, p, previous: q, offer: true)
                    } else if periods[p].facts.productID != periods[q].facts.productID {
                        add("product_change", date, p, previous: q, offer: true)
                    } else {
                        add("renew", date, p, offer: true)
                    }
                }
                // Generated receipts carry no renewal info: an end is known from a later run, a cancellation or
                // a receipt made after it.
                if r + 1 < runs.count || periods[run.last!].cancellation != nil || observed >= runEnds[r] {
                    add("expire", runEnds[r], run.last!, offer: false)
                }
            }
            for i in periods.indices where periods[i].facts.purchaseDate != nil {
                if let c = periods[i].cancellation, c.reason != nil { add("refund", c.date, i, offer: false) }
            }
            events.sort { a, b in
                if a.date != b.date { return a.date < b.date }
                if a.event != b.event { return bytes(a.event, b.event) }
                return bytes(a.transactionID, b.transactionID)
            }
            rows += events
        }
        return rows
    }

    /// The `daily` rows at as-of time `asOf`, in the contract's order.
    func dailyRows(asOf: Int64?) -> [Daily] {
        guard let asOf else { return [] }
        let day: Int64 = 86_400_000
        let subscriptions = subscriptionPeriods()
        let starts = subscriptions.flatMap { $0.periods.compactMap(\.facts.purchaseDate) }
        guard let earliest = starts.min() else { return [] }
        let firstDay = CivilTime.floorDiv(earliest, day)
        let lastDay = CivilTime.floorDiv(asOf, day)
        guard firstDay <= lastDay else { return [] }
        struct Cell: Hashable {
            var day: Int64
            var environment: String
            var bundleID: String
            var productID: String
        }
        var cells: [Cell: [Int64]] = [:]
        func count(_ d: Int64, _ key: Key, _ product: String, _ column: Int) {
            let cell = Cell(day: d, environment: key.environment, bundleID: key.bundleID, productID: product)
            cells[cell, default: Array(repeating: 0, count: 13)][column] += 1
        }
        for (key, periods) in subscriptions {
            let observed = periods.map(\.lastSeen).max()!
            // After its last dated instant a subscription's state no longer changes: judge it once there.
            let instants = periods.flatMap { [$0.facts.purchaseDate, $0.facts.expiresDate, $0.cancellation?.date] }
            let settled = CivilTime.floorDiv(instants.compactMap { $0 }.max()!, day) + 1
            var last: (state: String, product: String?, trial: Bool, intro: Bool)? = nil
            for d in firstDay...lastDay {
                let t = min((d + 1) * day, asOf)
                if d <= settled || d == lastDay || last == nil {
                    last = Self.snapshot(periods, observedThrough: observed, at: t)
                }
                guard let s = last, let product = s.product else { continue }
                switch s.state {
                case "active":
                    count(d, key, product, 0)
                    if s.trial { count(d, key, product, 1) }
                    if s.intro { count(d, key, product, 2) }
                case "unknown": count(d, key, product, 5)
                default: break
                }
            }
        }
        let flows = Dictionary(uniqueKeysWithValues: Self.flowColumns.enumerated().map { ($1, 6 + $0) })
        let flowOf: [String: String] = [
            "subscribe": "starts", "start_trial": "starts", "start_intro_offer": "starts",
            "start_promotional_offer": "starts", "reactivate": "reactivations", "convert": "conversions",
            "renew": "renewals", "product_change": "product_changes", "refund": "refunds", "expire": "expirations",
        ]
        for e in eventRows() where e.date <= asOf {
            let d = CivilTime.floorDiv(e.date, day)
            guard d >= firstDay else { continue }
            let key = Key(environment: e.environment, bundleID: e.bundleID, transactionID: e.originalTransactionID)
            count(d, key, e.productID, flows[flowOf[e.event]!]!)
        }
        return cells.filter { $0.value.contains { $0 != 0 } }.map {
            Daily(
                day: $0.key.day, environment: $0.key.environment, bundleID: $0.key.bundleID,
                productID: $0.key.productID, counts: $0.value)
        }.sorted { a, b in
            if a.day != b.day { return a.day < b.day }
            if a.environment != b.environment { return bytes(a.environment, b.environment) }
            if a.bundleID != b.bundleID { return bytes(a.bundleID, b.bundleID) }
            return bytes(a.productID, b.productID)
        }
    }

    /// The subscription's state at `t` and the product it counts under: the period making it active (of
    /// several, the greatest in rank), else the newest period purchased by `t`.
    static func snapshot(_ periods: [Purchase], observedThrough: Int64, at t: Int64) -> (
        state: String, product: String?, trial: Bool, intro: Bool
    ) {
        let state = state(periods, observedThrough: observedThrough, asOf: t)
        let counted = periods.filter { ($0.facts.purchaseDate ?? Int64.max) <= t }
        if state == "active" {
            let making = counted.last { p in
                !((p.cancellation?.date).map { $0 <= t } ?? false) && t < p.facts.expiresDate!
            }!
            let trial = making.facts.isTrialPeriod == true
            return (state, making.facts.productID, trial, !trial && making.facts.isInIntroOfferPeriod == true)
        }
        return (state, counted.last?.facts.productID, false, false)
    }
}
