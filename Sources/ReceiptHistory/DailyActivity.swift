import ReceiptModel

/// The thirteen counts of a `daily` row, in column order: six snapshot columns, then seven flow columns.
enum DailyColumn: Int, CaseIterable, Sendable {
    case active, activeTrial, activeIntro, gracePeriod, billingRetry, unknown
    case starts, reactivations, conversions, renewals, productChanges, refunds, expirations

    static let snapshotCount = 6
    /// The number of columns (`allCases.count`, without building the array of cases).
    static let count = 13
}

/// A `daily` row's product: environment, bundle_id, product_id.
struct DailyProduct: Hashable, Sendable {
    var environment: UInt8
    var bundleID: [UInt8]
    var productID: [UInt8]

    /// Hashes the byte strings as blocks (the synthesized hash feeds the hasher one byte at a time).
    func hash(into h: inout Hasher) {
        h.combine(environment)
        bundleID.withUnsafeBytes { h.combine(bytes: $0) }
        h.combine(bundleID.count)
        productID.withUnsafeBytes { h.combine(bytes: $0) }
    }

    /// Environment, bundle_id, product_id; bytewise.
    static func precedes(_ a: DailyProduct, _ b: DailyProduct) -> Bool {
        if a.environment != b.environment { return a.environment < b.environment }
        let c = compareBytes(a.bundleID, b.bundleID)
        if c != 0 { return c < 0 }
        return compareBytes(a.productID, b.productID) < 0
    }
}

/// Gathers the `daily` table as changes: per (day, product), the change of each snapshot count on that day and
/// the events of that day. Its size grows with the days and products that see a change, never with the
/// subscriptions; `rows` turns the changes into levels with one running sum per product.
struct DailyActivity {
    private var products: [DailyProduct: Int] = [:]
    private var productList: [DailyProduct] = []
    /// Per (day, product), a slot of `DailyColumn.allCases.count` counts in `counts`.
    private var changes = DailySlots()
    private var counts: [Int64] = []
    /// The day of the earliest purchase_date of any period.
    private(set) var firstDay: Int64? = nil

    /// Estimated bytes held (for the spill budget's accounting).
    var estimatedBytes: Int { changes.count * 200 + productList.count * 100 }

    mutating func sawPurchase(_ t: Int64) {
        let d = DayRange.day(t)
        firstDay = min(firstDay ?? d, d)
    }

    /// The last product looked up and its index (most lookups repeat the one before).
    private var lastProduct: (product: DailyProduct, index: Int)? = nil
    /// The last (day, product index) looked up and its slot.
    private var lastSlot: (day: Int64, productIndex: Int, slot: Int) = (0, -1, 0)

    /// The product's index, for `add(_:day:productIndex:_:)`.
    mutating func index(_ p: DailyProduct) -> Int {
        if let last = lastProduct, last.product == p { return last.index }
        let i: Int
        if let known = products[p] {
            i = known
        } else {
            i = productList.count
            products[p] = i
            productList.append(p)
        }
        lastProduct = (p, i)
        return i
    }

    mutating func add(_ column: DailyColumn, day: Int64, product: DailyProduct, _ n: Int64) {
        add(column, day: day, productIndex: index(product), n)
    }

    /// `add` for a product by its `index`.
    mutating func add(_ column: DailyColumn, day: Int64, productIndex: Int, _ n: Int64) {
        counts[slot(day: day, productIndex: productIndex) + column.rawValue] += n
    }

    /// A slot's counts when new (appended as one block copy).
    private static let zeros = [Int64](repeating: 0, count: DailyColumn.count)

    /// Where the counts of (`day`, product `productIndex`) start in `counts` (made zero when new).
    private mutating func slot(day: Int64, productIndex: Int) -> Int {
        let width = DailyColumn.count
        if lastSlot.day == day && lastSlot.productIndex == productIndex { return lastSlot.slot * width }
        let (slot, isNew) = changes.slot(day: day, product: productIndex)
        if isNew { counts.append(contentsOf: Self.zeros) }
        lastSlot = (day, productIndex, slot)
        return slot * width
    }

    /// A subscription's snapshot moved on `day` from `old` to `new` (nil: counted in no column); `product` gives
    /// the product index of a period.
    mutating func move(day: Int64, from old: DailySnapshot?, to new: DailySnapshot?, product: (Int) -> Int) {
        if let old { count(old, day: day, productIndex: product(old.period), -1) }
        if let new { count(new, day: day, productIndex: product(new.period), 1) }
    }

    private mutating func count(_ s: DailySnapshot, day: Int64, productIndex p: Int, _ n: Int64) {
        let at = slot(day: day, productIndex: p)
        counts[at + s.column.rawValue] += n
        if s.trial { counts[at + DailyColumn.activeTrial.rawValue] += n }
        if s.intro { counts[at + DailyColumn.activeIntro.rawValue] += n }
    }

    /// The rows from the first day to the day of `asOf`, in row order (day, then product), rows whose counts are
    /// all zero left out: `emit(day, product, counts)`.
    func rows(
        asOf: Int64?, _ emit: (Int64, DailyProduct, [Int64]) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        guard let asOf, let firstDay else { return }
        let lastDay = DayRange.day(asOf)
        guard firstDay <= lastDay else { return }
        // Products ranked in row order; changes (their rank and slot) in day order.
        let order = productList.indices.sorted { DailyProduct.precedes(productList[$0], productList[$1]) }
        var rank = [Int](repeating: 0, count: productList.count)
        for (r, i) in order.enumerated() { rank[i] = r }
        let width = DailyColumn.count
        let snapshots = DailyColumn.snapshotCount
        var dated: [(day: Int64, rank: Int, slot: Int)] = []
        dated.reserveCapacity(changes.count)
        for (slot, k) in changes.keys.enumerated() where k.day <= lastDay {
            dated.append((k.day, rank[k.product], slot * width))
        }
        dated.sort { $0.day != $1.day ? $0.day < $1.day : $0.rank < $1.rank }
        // Per product rank, the snapshot levels; the ranks whose levels are not all zero, in order.
        var levels = [Int64](repeating: 0, count: order.count * snapshots)
        var live: [Int] = []
        // The day's changes with a flow, in rank order (start in `counts`).
        var flows: [(rank: Int, at: Int)] = []
        var row = [Int64](repeating: 0, count: width)
        var next = 0
        var day = dated.first.map { min($0.day, firstDay) } ?? firstDay
        while day <= lastDay {
            flows.removeAll(keepingCapacity: true)
            while next < dated.count && dated[next].day == day {
                let (_, r, at) = dated[next]
                var any = false
                for c in 0..<snapshots {
                    levels[r * snapshots + c] += counts[at + c]
                    any = any || levels[r * snapshots + c] != 0
                }
                let place = lowerBound(live, r)
                let isLive = place < live.count && live[place] == r
                if any && !isLive { live.insert(r, at: place) }
                if !any && isLive { live.remove(at: place) }
                if (snapshots..<width).contains(where: { counts[at + $0] != 0 }) { flows.append((r, at)) }
                next += 1
            }
            if day >= firstDay {
                // The live ranks and those with a flow, merged in order.
                var i = 0
                var f = 0
                while i < live.count || f < flows.count {
                    let r: Int
                    var flow: Int? = nil
                    if f < flows.count && (i == live.count || flows[f].rank <= live[i]) {
                        r = flows[f].rank
                        flow = flows[f].at
                        if i < live.count && live[i] == r { i += 1 }
                        f += 1
                    } else {
                        r = live[i]
                        i += 1
                    }
                    // One row's counts, filled in place: levels, then the day's flows (zero without any).
                    var any = false
                    for c in 0..<snapshots {
                        row[c] = levels[r * snapshots + c]
                        any = any || row[c] != 0
                    }
                    for c in snapshots..<width {
                        row[c] = flow.map { counts[$0 + c] } ?? 0
                        any = any || row[c] != 0
                    }
                    if any { try emit(day, productList[order[r]], row) }
                }
            }
            // Days with no change and nothing live are skipped.
            if live.isEmpty {
                guard next < dated.count else { break }
                day = max(day + 1, dated[next].day)
            } else {
                day += 1
            }
        }
    }
}

/// The first index of sorted `a` whose element is not less than `x`.
private func lowerBound(_ a: [Int], _ x: Int) -> Int {
    var low = 0
    var high = a.count
    while low < high {
        let mid = (low + high) / 2
        if a[mid] < x { low = mid + 1 } else { high = mid }
    }
    return low
}

/// The `daily` product a period is counted under.
func product(_ p: PeriodRecord) -> DailyProduct {
    DailyProduct(environment: p.environment, bundleID: p.bytes(p.bundleID), productID: p.bytes(p.productID))
}
