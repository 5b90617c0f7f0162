import ReceiptModel
import ReceiptSink

/// Computes a run's `ReportData` from the rows the run writes: the `receipts` rows of each batch (`add`) and,
/// as a `TableObserver`, the rows of the `subscriptions` table and of a `daily` table when the run writes one.
/// Memory is bounded: at most `ReportData.maxKeys` distinct apps, months and products are kept apart.
public final class ReportAggregator: TableObserver, @unchecked Sendable {
    /// The columns of a `daily` table the report reads (by name): `day` (a date or a timestamp), `product_id`, and the
    /// counts `active`, `starts`, `conversions`, `renewals`, `refunds` and `expirations` (int64; a missing one
    /// counts 0).
    public static let dailyTable = "daily"
    static let dailyCounts = ["starts", "conversions", "renewals", "refunds", "expirations"]

    private let lock = Lock()
    // Guarded by `lock`.
    private var records = 0
    private var newestValid: Int64? = nil
    private var valid = 0
    private var appIndex: [AppKey: Int] = [:]
    private var apps: [(key: [UInt8], bundleID: String?, environment: String?, kind: String, count: ReportData.Count)] =
        []
    private var lastAppKey: [UInt8] = []
    private var lastApp = -1
    private var otherApps = ReportData.Count()
    private var months: [Int64: ReportData.Count] = [:]
    private var otherMonths = ReportData.Count()
    private var undated = ReportData.Count()
    private var sawSubscriptions = false
    private var subscriptionRows = 0
    private var states: [String: Int] = [:]  // "environment\u{0}state"
    private var products: [String: (active: Int, total: Int)] = [:]
    private var otherProducts = (active: 0, total: 0)
    private var starts: [Int64: Int] = [:]
    private var otherStarts = 0
    private var sawDaily = false
    private var daily = DailyAggregate()

    public init() {}

    /// Counts the `receipts` rows of one batch.
    public func add(receipts t: ColumnTable) {
        typealias C = ReceiptsColumns
        let status = t.int32s[C.status]
        let bundle = t.strings[C.bundleID]
        let type = t.strings[C.receiptType]
        let kind = t.strings[C.recordKind]
        let created = t.int64s[C.receiptCreationDate]
        lock.withLock {
            var key: [UInt8] = []
            for r in 0..<t.rowCount {
                let ok = status[r] == ReceiptStatus.valid.rawValue
                records += 1
                if ok { valid += 1 }
                key.removeAll(keepingCapacity: true)
                Self.appendKeyPart(bundle, r, &key)
                Self.appendKeyPart(type, r, &key)
                let isJWS = kind.withBytes(r) { $0.starts(with: "jws".utf8) }
                key.append(isJWS ? 1 : 0)
                addApp(key, ok: ok, bundle: bundle, type: type, row: r, isJWS: isJWS)
                if let ms = created[r] {
                    if ok { newestValid = max(newestValid ?? ms, ms) }
                    let month = Self.monthIndex(ms)
                    if months[month] == nil && months.count >= ReportData.maxKeys {
                        if ok { otherMonths.valid += 1 } else { otherMonths.rejected += 1 }
                    } else {
                        months[month, default: ReportData.Count()].add(ok)
                    }
                } else {
                    undated.add(ok)
                }
            }
        }
    }

    private func addApp(
        _ key: [UInt8], ok: Bool, bundle: StringColumn, type: StringColumn, row r: Int, isJWS: Bool
    ) {
        if lastApp < 0 || key != lastAppKey {
            if let i = appIndex[AppKey(bytes: key)] {
                lastApp = i
            } else if apps.count < ReportData.maxKeys {
                lastApp = apps.count
                appIndex[AppKey(bytes: key)] = lastApp
                apps.append(
                    (key, Self.text(bundle, r), Self.text(type, r), isJWS ? "jws" : "receipt", ReportData.Count()))
            } else {
                lastApp = -1
                otherApps.add(ok)
                return
            }
            // Copied into the kept buffer: sharing `key`'s storage would make the caller's next row copy it.
            lastAppKey.removeAll(keepingCapacity: true)
            lastAppKey.append(contentsOf: key)
        }
        apps[lastApp].count.add(ok)
    }

    /// A null value and an empty one are told apart by a leading byte; values are cut at `maxValueBytes`.
    private static func appendKeyPart(_ c: StringColumn, _ r: Int, _ key: inout [UInt8]) {
        guard c.valid[r] else { return key.append(0) }
        key.append(1)
        c.withBytes(r) { key.append(contentsOf: $0.prefix(ReportData.maxValueBytes)) }
        key.append(0)
    }

    /// Row `r` of `c` as text, cut at `maxValueBytes` (marked with an ellipsis): names come from the input, and
    /// one of a megabyte must not make the aggregates or the page large.
    static func text(_ c: StringColumn, _ r: Int) -> String? {
        guard c.valid[r] else { return nil }
        return c.withBytes(r) { bytes in
            bytes.count <= ReportData.maxValueBytes
                ? String(decoding: bytes, as: UTF8.self)
                : String(decoding: bytes.prefix(ReportData.maxValueBytes), as: UTF8.self) + "…"
        }
    }

    /// `TableObserver`: the `subscriptions` rows and a `daily` table's; other tables are ignored.
    public func observe(_ table: ColumnTable) {
        switch table.schema.name {
        case TableSchema.subscriptions.name: lock.withLock { addSubscriptions(table) }
        case Self.dailyTable: lock.withLock { addDaily(table) }
        default: break
        }
    }

    /// Marks the run as writing the history tables (so that an empty `subscriptions` table reads as empty, not
    /// as absent).
    public func expectSubscriptions() { lock.withLock { sawSubscriptions = true } }

    private func addSubscriptions(_ t: ColumnTable) {
        typealias C = SubscriptionsColumns
        sawSubscriptions = true
        let env = t.strings[C.environment]
        let state = t.strings[C.state]
        let product = t.strings[C.latestProductID]
        let first = t.int64s[C.firstPurchaseDate]
        for r in 0..<t.rowCount {
            subscriptionRows += 1
            let s = Self.text(state, r) ?? ""
            states["\(Self.text(env, r) ?? "")\u{0}\(s)", default: 0] += 1
            let p = Self.text(product, r) ?? ""
            let active = s == "active" ? 1 : 0
            if let old = products[p] {
                products[p] = (old.active + active, old.total + 1)
            } else if products.count < ReportData.maxKeys {
                products[p] = (active, 1)
            } else {
                otherProducts = (otherProducts.active + active, otherProducts.total + 1)
            }
            if let ms = first[r] {
                let m = Self.monthIndex(ms)
                if starts[m] == nil && starts.count >= ReportData.maxKeys {
                    otherStarts += 1
                } else {
                    starts[m, default: 0] += 1
                }
            }
        }
    }

    private func addDaily(_ t: ColumnTable) {
        guard let day = t.schema.column(named: "day"), day.kind == .timestampMillis || day.kind == .date,
            let product = t.schema.column(named: "product_id"), product.kind == .string
        else { return }
        sawDaily = true
        func int64Column(_ name: String) -> PrimitiveColumn<Int64>? {
            guard let c = t.schema.column(named: name), c.kind == .int64 else { return nil }
            return t.int64s[c.slot]
        }
        let products = t.strings[product.slot]
        let active = int64Column("active")
        let events = Self.dailyCounts.map(int64Column)
        let dates = day.kind == .date ? t.int32s[day.slot] : nil
        let times = day.kind == .date ? nil : t.int64s[day.slot]
        var last: (day: Int64, month: Int64) = (.min, 0)
        for r in 0..<t.rowCount {
            let ms: Int64
            if let dates {
                guard let d = dates[r] else { continue }
                ms = Int64(d) * 86_400_000
            } else {
                guard let v = times?[r] else { continue }
                ms = v
            }
            let day = CivilTime.floorDiv(ms, 86_400_000)
            // A day's rows come together: its month is worked out once.
            if day != last.day { last = (day, Self.monthIndex(ms)) }
            daily.add(
                day: day, month: last.month, products: products, row: r, active: Int(active?[r] ?? 0),
                events: events)
        }
    }

    /// The aggregates so far.
    public var data: ReportData {
        lock.withLock {
            var d = ReportData()
            d.records = records
            d.newestValid = newestValid
            d.valid = valid
            d.apps = apps.map {
                ReportData.AppRow(bundleID: $0.bundleID, environment: $0.environment, kind: $0.kind, count: $0.count)
            }
            .sorted { a, b in
                a.count.total != b.count.total
                    ? a.count.total > b.count.total
                    : (a.bundleID ?? "", a.environment ?? "", a.kind) < (b.bundleID ?? "", b.environment ?? "", b.kind)
            }
            d.otherApps = otherApps
            d.months = months.keys.sorted().map { ReportData.MonthRow(month: Self.monthText($0), count: months[$0]!) }
            d.otherMonths = otherMonths
            d.undated = undated
            if sawSubscriptions { d.subscriptions = subscriptionData() }
            if sawDaily { d.activity = activityData() }
            return d
        }
    }

    private func subscriptionData() -> ReportData.Subscriptions {
        var s = ReportData.Subscriptions()
        s.rows = subscriptionRows
        s.byState = states.map { key, count in
            let parts = key.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false)
            return ReportData.StateRow(
                environment: String(parts[0]), state: parts.count > 1 ? String(parts[1]) : "", count: count)
        }
        .sorted {
            ($0.environment, SubscriptionStates.rank($0.state), $0.state)
                < ($1.environment, SubscriptionStates.rank($1.state), $1.state)
        }
        s.byProduct = products.map {
            ReportData.ProductRow(productID: $0.key, active: $0.value.active, total: $0.value.total)
        }
        .sorted { $0.total != $1.total ? $0.total > $1.total : $0.productID < $1.productID }
        if otherProducts.total > 0 {
            s.byProduct.append(
                ReportData.ProductRow(
                    productID: "(other products)", active: otherProducts.active, total: otherProducts.total))
        }
        s.startsByMonth = starts.keys.sorted().map {
            ReportData.MonthValue(month: Self.monthText($0), value: starts[$0]!)
        }
        if otherStarts > 0 { s.startsByMonth.append(ReportData.MonthValue(month: "other", value: otherStarts)) }
        return s
    }

    /// The eight products with the most active subscriptions on their busiest day are charted apart; the rest are
    /// summed as "other products".
    private func activityData() -> ReportData.Activity {
        var a = ReportData.Activity()
        let names = daily.names
        // Each product counted on some day, with its greatest count of a day (0 at least).
        var peak = [Int?](repeating: nil, count: names.count)
        for d in daily.days {
            for (p, n) in zip(d.products, d.active) { peak[p] = max(peak[p] ?? 0, n) }
        }
        let counted: [(product: Int, peak: Int)] = peak.indices.compactMap { p in peak[p].map { (p, $0) } }
        let ranked: [Int] = counted.sorted { x, y in
            x.peak != y.peak ? x.peak > y.peak : names[x.product] < names[y.product]
        }
        .map(\.product)
        let shown = Array(ranked.prefix(8))
        a.products = shown.map { names[$0] } + (ranked.count > shown.count ? ["(other products)"] : [])
        // Each product's column in a day's row: its place among those shown, else the "other products" column.
        var column = [Int](repeating: shown.count, count: names.count)
        for (i, p) in shown.enumerated() { column[p] = i }
        for d in daily.days.sorted(by: { $0.day < $1.day }) {
            var row = [Int](repeating: 0, count: shown.count + 1)
            for (p, n) in zip(d.products, d.active) { row[column[p]] += n }
            if ranked.count == shown.count { row.removeLast() }
            let (y, m, day) = CivilTime.civilFromDays(d.day)
            a.days.append((Self.pad(y, 4) + "-" + Self.pad(Int64(m), 2) + "-" + Self.pad(Int64(day), 2), row))
        }
        let months = daily.months
        a.months = months.keys.sorted().map { m in
            let c = months[m]!
            var e = ReportData.EventMonth(month: Self.monthText(m))
            (e.starts, e.conversions, e.renewals, e.refunds, e.expirations) = (c[0], c[1], c[2], c[3], c[4])
            return e
        }
        return a
    }

    /// Months since year 0 of the UTC month of `ms`.
    static func monthIndex(_ ms: Int64) -> Int64 {
        let (y, m, _) = CivilTime.civilFromDays(CivilTime.floorDiv(ms, 86_400_000))
        return y * 12 + Int64(m - 1)
    }

    /// `YYYY-MM` of a `monthIndex`.
    static func monthText(_ index: Int64) -> String {
        pad(CivilTime.floorDiv(index, 12), 4) + "-" + pad(CivilTime.floorMod(index, 12) + 1, 2)
    }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v.magnitude)
        return (v < 0 ? "-" : "") + (s.count >= width ? s : String(repeating: "0", count: width - s.count) + s)
    }
}

extension ReportData.Count {
    mutating func add(_ valid: Bool) {
        if valid { self.valid += 1 } else { rejected += 1 }
    }
}

/// An app's key bytes as a dictionary key, hashed as one run of bytes (an array of bytes hashes element by
/// element).
private struct AppKey: Hashable {
    var bytes: [UInt8]

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
