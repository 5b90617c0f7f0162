import ReceiptModel
import Testing

@testable import ReceiptReport

struct DailyAggregateTests {
    static let schema = TableSchema(
        name: "daily",
        [("day", .timestampMillis, false), ("product_id", .string, true), ("active", .int64, false)])

    static func row(_ t: inout ColumnTable, _ day: Int64, _ product: String?, _ active: Int64) {
        ReportFixtures.append(
            &t, strings: product.map { ["product_id": $0] } ?? [:],
            int64s: ["day": ReportFixtures.date(2024, 1, 1) + day * 86_400_000, "active": active])
    }

    @Test func aDayThatComesBackAddsToItsProductsAndAProductRepeatedOnADayIsCountedOnce() {
        var t = ColumnTable(schema: Self.schema)
        Self.row(&t, 0, "a", 1)
        Self.row(&t, 0, "b", 2)
        Self.row(&t, 1, "a", 3)
        Self.row(&t, 0, "a", 10)
        Self.row(&t, 1, "a", 20)
        Self.row(&t, 1, "b", 5)
        let aggregator = ReportAggregator()
        aggregator.observe(t)
        let a = aggregator.data.activity
        #expect(a?.products == ["a", "b"])
        #expect(a?.days.map(\.day) == ["2024-01-01", "2024-01-02"])
        #expect(a?.days.map(\.active) == [[11, 2], [23, 5]])
    }

    @Test func productsBeyondTheEighthAreSummedAndANullProductIsTheEmptyOne() {
        var t = ColumnTable(schema: Self.schema)
        for p in 0..<10 { Self.row(&t, 0, "p\(p)", Int64(100 - p)) }
        Self.row(&t, 1, nil, 1)
        Self.row(&t, 1, "", 200)
        let aggregator = ReportAggregator()
        aggregator.observe(t)
        let a = aggregator.data.activity
        #expect(a?.products == ["", "p0", "p1", "p2", "p3", "p4", "p5", "p6", "(other products)"])
        #expect(
            a?.days.map(\.active) == [[0, 100, 99, 98, 97, 96, 95, 94, 93 + 92 + 91], [201, 0, 0, 0, 0, 0, 0, 0, 0]])
    }

    @Test func aDayKeepsAtMostTheCapOfProducts() {
        var t = ColumnTable(schema: Self.schema)
        for p in 0..<(ReportData.maxKeys + 3) { Self.row(&t, 0, "p\(p)", 1) }
        Self.row(&t, 0, "p0", 1)
        let aggregator = ReportAggregator()
        aggregator.observe(t)
        let a = aggregator.data.activity
        #expect(a?.days.count == 1)
        #expect(a?.days.first?.active.reduce(0, +) == ReportData.maxKeys + 1)
    }

    /// Days whose products come in changing orders, with some missing, a null one and an empty one: every day's
    /// active counts and every month's events must be the plain sums of the rows.
    @Test func countsDoNotDependOnTheOrderOfADaysProducts() {
        let schema = TableSchema(
            name: "daily",
            [("day", .timestampMillis, false), ("product_id", .string, true), ("active", .int64, false)]
                + ReportAggregator.dailyCounts.map { ($0, ColumnKind.int64, false) })
        var t = ColumnTable(schema: schema)
        let orders: [[String?]] = [
            ["a", "b", "c"], ["a", "c"], ["c", "b", "a"], [nil, "a", ""], ["b"], ["a", "b", "c"],
        ]
        var active: [Int64: [String: Int]] = [:]
        var starts: [Int64: Int] = [:]
        var n: Int64 = 0
        for day in Int64(0)..<62 {
            for p in orders[Int(day) % orders.count] {
                n += 1
                ReportFixtures.append(
                    &t, strings: p.map { ["product_id": $0] } ?? [:],
                    int64s: [
                        "day": ReportFixtures.date(2024, 1, 1) + day * 86_400_000, "active": n, "starts": day,
                    ])
                active[day, default: [:]][p ?? "", default: 0] += Int(n)
                starts[day < 31 ? 0 : day < 60 ? 1 : 2, default: 0] += Int(day)
            }
        }
        let aggregator = ReportAggregator()
        aggregator.observe(t)
        guard let a = aggregator.data.activity else {
            Issue.record("no activity")
            return
        }
        #expect(a.products.sorted() == ["", "a", "b", "c"])
        #expect(a.days.count == 62)
        for (day, row) in a.days.enumerated() {
            let expected = a.products.map { active[Int64(day)]?[$0] ?? 0 }
            #expect(row.active == expected, "day \(day)")
        }
        #expect(a.months.map(\.month) == ["2024-01", "2024-02", "2024-03"])
        #expect(a.months.map(\.starts) == [starts[0], starts[1], starts[2]])
    }
}
