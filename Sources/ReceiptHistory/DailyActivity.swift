import ReceiptModel

/// The thirteen counts of a `daily` row, in column order: six snapshot columns, then seven flow columns.
enum DailyColumn: Int, CaseIterable, Sendable {
    case active, activeTrial, activeIntro, gracePeriod, billingRetry, unknown
    case starts, reactivations, conversions, renewals, productChanges, refunds, expirations

    static let snapshotCount = 6
}

/// A `daily` row's product: environment, bundle_id, product_id.
struct DailyProduct: Hashable, Sendable {
    var environment: UInt8
    var bundleID: [UInt8]
    var productID: [UInt8]

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
    private struct Key: Hashable {
        var day: Int64
        var product: Int
    }
    private var products: [DailyProduct: Int] = [:]
    private var productList: [DailyProduct] = []
    /// Per (day, product), a slot of `DailyColumn.allCases.count` counts in `counts`.
    private var changes: [Key: Int] = [:]
    private var counts: [Int64] = []
    /// The day of the earliest purchase_date of any period.
    private(set) var firstDay: Int64? = nil

    /// Estimated bytes held (for the spill budget's accounting).
    var estimatedBytes: Int { changes.count * 200 + productList.count * 100 }

    mutating func sawPurchase(_ t: Int64) {
        let d = DayRange.day(t)
        firstDay = min(firstDay ?? d, d)
    }

    /// The product's index, for `add(_:day:productIndex:_:)`.
    mutating func index(_ p: DailyProduct) -> Int {
        if let i = products[p] { return i }
        products[p] = productList.count
        productList.append(p)
        return productList.count - 1
    }

    mutating func add(_ column: DailyColumn, day: Int64, product: DailyProduct, _ n: Int64) {
        add(column, day: day, productIndex: index(product), n)
    }

    /// `add` for a product by its `index`.
    mutating func add(_ column: DailyColumn, day: Int64, productIndex: Int, _ n: Int64) {
        let width = DailyColumn.allCases.count
        let key = Key(day: day, product: productIndex)
        let slot: Int
        if let s = changes[key] {
            slot = s
        } else {
            slot = counts.count / width
            changes[key] = slot
            counts.append(contentsOf: repeatElement(0, count: width))
        }
        counts[slot * width + column.rawValue] += n
    }

    /// A subscription's snapshot moved on `day` from `old` to `new` (nil: counted in no column); `product` gives
    /// the product index of a period.
    mutating func move(day: Int64, from old: DailySnapshot?, to new: DailySnapshot?, product: (Int) -> Int) {
        if let old { count(old, day: day, productIndex: product(old.period), -1) }
        if let new { count(new, day: day, productIndex: product(new.period), 1) }
    }

    private mutating func count(_ s: DailySnapshot, day: Int64, productIndex p: Int, _ n: Int64) {
        add(s.column, day: day, productIndex: p, n)
        if s.trial { add(.activeTrial, day: day, productIndex: p, n) }
        if s.intro { add(.activeIntro, day: day, productIndex: p, n) }
    }

    /// The rows from the first day to the day of `asOf`, in row order (day, then product), rows whose counts are
    /// all zero left out: `emit(day, product, counts)`.
    func rows(
        asOf: Int64?, _ emit: (Int64, DailyProduct, [Int64]) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        guard let asOf, let firstDay else { return }
        let lastDay = DayRange.day(asOf)
        guard firstDay <= lastDay else { return }
        // Products ranked in row order; changes grouped by day.
        let order = productList.indices.sorted { DailyProduct.precedes(productList[$0], productList[$1]) }
        var rank = [Int](repeating: 0, count: productList.count)
        for (r, i) in order.enumerated() { rank[i] = r }
        var byDay: [Int64: [(rank: Int, counts: [Int64])]] = [:]
        let width = DailyColumn.allCases.count
        for (k, slot) in changes where k.day <= lastDay {
            byDay[k.day, default: []].append((rank[k.product], Array(counts[slot * width..<(slot + 1) * width])))
        }
        var levels = [[Int64]](repeating: Array(repeating: 0, count: DailyColumn.snapshotCount), count: order.count)
        var live = Set<Int>()
        var row = [Int64](repeating: 0, count: width)
        let days = byDay.keys.sorted()
        var next = 0
        var day = days.first.map { min($0, firstDay) } ?? firstDay
        while day <= lastDay {
            var flows: [Int: [Int64]] = [:]
            if next < days.count && days[next] == day {
                for (r, counts) in byDay[day]! {
                    for c in 0..<DailyColumn.snapshotCount { levels[r][c] += counts[c] }
                    if levels[r].contains(where: { $0 != 0 }) { live.insert(r) } else { live.remove(r) }
                    let f = Array(counts[DailyColumn.snapshotCount...])
                    if f.contains(where: { $0 != 0 }) { flows[r] = f }
                }
                next += 1
            }
            if day >= firstDay {
                for r in live.union(flows.keys).sorted() {
                    // One row's counts, filled in place: levels, then the day's flows (zero without any).
                    var any = false
                    for c in 0..<DailyColumn.snapshotCount {
                        row[c] = levels[r][c]
                        any = any || row[c] != 0
                    }
                    let f = flows[r]
                    for c in 0..<(width - DailyColumn.snapshotCount) {
                        row[DailyColumn.snapshotCount + c] = f?[c] ?? 0
                        any = any || row[DailyColumn.snapshotCount + c] != 0
                    }
                    if any { try emit(day, productList[order[r]], row) }
                }
            }
            // Days with no change and nothing live are skipped.
            if live.isEmpty {
                guard next < days.count else { break }
                day = max(day + 1, days[next])
            } else {
                day += 1
            }
        }
    }
}

/// The `daily` product a period is counted under.
func product(_ p: PeriodRecord) -> DailyProduct {
    DailyProduct(
        environment: p.key.subscription.environment, bundleID: p.key.subscription.bundleID, productID: p.productID)
}
