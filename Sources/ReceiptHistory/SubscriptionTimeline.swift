import ReceiptModel

/// Where a subscription is counted in a `daily` snapshot: its state column and product, or nowhere.
struct DailySnapshot: Equatable, Sendable {
    var column: DailyColumn
    /// The period whose product the subscription is counted under.
    var period: Int
    var trial: Bool
    var intro: Bool
}

/// The state of one subscription through time, swept over the instants where it can change (its periods' starts,
/// ends and cancellations, its renewal info's signing and grace dates), judged at each day's snapshot time by
/// `SubscriptionRecord.state(asOf:renewal:)`. Calls `change(day, from, to)` on each day whose snapshot differs
/// from the day before's. Cost: O(p log p) for p periods, whatever the number of days.
func sweepSubscriptionStates(
    _ periods: [PeriodRecord], observedThrough: Int64?, renewal: RenewalRecord?,
    days: DayRange, change: (Int64, DailySnapshot?, DailySnapshot?) -> Void
) {
    var instants: [Int64] = []
    instants.reserveCapacity(periods.count * 3 + 2)
    for i in periods.indices {
        guard let start = periods[i].purchaseDate else { continue }
        instants.append(start)
        if let e = periods[i].expiresDate { instants.append(e) }
        if let c = periods[i].cancellationDate { instants.append(c) }
    }
    if let s = renewal?.signedDate { instants.append(s) }
    if let g = renewal?.gracePeriodExpiresDate { instants.append(g) }
    instants.sort()
    // Counted periods enter in rank order (a null purchase_date never counts and sorts first).
    let firstCounted = periods.firstIndex { $0.purchaseDate != nil } ?? periods.count
    var next = firstCounted
    // Periods giving service at t: [purchase_date, min(expires_date, cancellation_date)), greatest rank on top.
    var active = MaxHeap()
    // Counted periods not cancelled at t, greatest expires_date on top.
    var uncancelled = MaxHeap()
    var current: DailySnapshot? = nil
    var i = 0
    while i < instants.count {
        let t = instants[i]
        if t > days.asOf { break }
        let day = days.effectiveDay(t)
        // Every instant with the same effective day: the state at the last of them is the day's.
        var last = i
        while last + 1 < instants.count, instants[last + 1] <= days.asOf, days.effectiveDay(instants[last + 1]) == day {
            last += 1
        }
        let at = instants[last]
        i = last + 1
        // Periods are read in place (a copy would retain each of their byte strings).
        while next < periods.count, let start = periods[next].purchaseDate, start <= at {
            let cancelled = periods[next].cancellationDate ?? Int64.max
            let expires = periods[next].expiresDate
            active.push(priority: Int64(next), until: min(expires ?? Int64.min, cancelled))
            if let e = expires { uncancelled.push(priority: e, until: cancelled) }
            next += 1
        }
        guard next > firstCounted else { continue }
        let making = active.top(at: at)
        let s = SubscriptionStateFacts(
            counted: true, activeAtA: making != nil,
            latestCountedCancelled: periods[next - 1].cancellationDate.map { $0 <= at } ?? false,
            latestCountedPurchaseDate: periods[next - 1].purchaseDate,
            countedExpires: uncancelled.top(at: at).map { $0 }, observedThrough: observedThrough)
        let snapshot: DailySnapshot?
        switch s.state(asOf: at, renewal: renewal) {
        case "active":
            let m = Int(making!)
            snapshot = DailySnapshot(
                column: .active, period: m, trial: periods[m].isTrialPeriod,
                intro: periods[m].isInIntroOfferPeriod && !periods[m].isTrialPeriod)
        case "grace_period":
            snapshot = DailySnapshot(column: .gracePeriod, period: next - 1, trial: false, intro: false)
        case "billing_retry":
            snapshot = DailySnapshot(column: .billingRetry, period: next - 1, trial: false, intro: false)
        case "unknown": snapshot = DailySnapshot(column: .unknown, period: next - 1, trial: false, intro: false)
        default: snapshot = nil
        }
        if snapshot != current {
            change(day, current, snapshot)
            current = snapshot
        }
    }
}

/// The days of `daily` and their snapshot times: each day's end, the last day's the as-of time A.
struct DayRange: Sendable {
    static let millisPerDay: Int64 = 86_400_000
    var asOf: Int64

    static func day(_ t: Int64) -> Int64 { CivilTime.floorDiv(t, millisPerDay) }

    /// The first day whose snapshot time is at or after `t` (for t <= A): the state changed at `t` shows from
    /// that day on.
    func effectiveDay(_ t: Int64) -> Int64 {
        // The day ending at or after t: its end, the next day's first instant, is >= t.
        let d = Self.day(t + Self.millisPerDay - 1) - 1
        return min(d, Self.day(asOf))
    }
}

/// A binary max-heap of (priority, until) entries, where an entry counts at times before `until`; entries whose
/// time has passed are dropped when they reach the top (times only move forward).
struct MaxHeap {
    private var items: [(priority: Int64, until: Int64)] = []

    mutating func push(priority: Int64, until: Int64) {
        items.append((priority, until))
        var c = items.count - 1
        while c > 0 {
            let parent = (c - 1) / 2
            guard items[parent].priority < items[c].priority else { break }
            items.swapAt(parent, c)
            c = parent
        }
    }

    /// The greatest priority among the entries that count at `t`.
    mutating func top(at t: Int64) -> Int64? {
        while let first = items.first, first.until <= t { pop() }
        return items.first?.priority
    }

    private mutating func pop() {
        let last = items.removeLast()
        guard !items.isEmpty else { return }
        items[0] = last
        var c = 0
        while true {
            let l = 2 * c + 1
            let r = l + 1
            var m = c
            if l < items.count && items[l].priority > items[m].priority { m = l }
            if r < items.count && items[r].priority > items[m].priority { m = r }
            if m == c { return }
            items.swapAt(m, c)
            c = m
        }
    }
}
