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
}
