import ReceiptModel
import ReceiptSink
import Testing

@testable import ReceiptReport

/// The aggregates count every row once, by app, environment, kind and month, and stay bounded.
@Suite struct ReportAggregatorTests {
    @Test func receiptsRowsAreCountedByAppEnvironmentKindAndMonth() {
        var t = ColumnTable(schema: .receipts)
        let april = ReportFixtures.date(2023, 4, 10)
        let may = ReportFixtures.date(2023, 5, 31) + 86_399_000
        ReportFixtures.receipt(&t, bundle: "com.a", type: "Production", created: april)
        ReportFixtures.receipt(&t, bundle: "com.a", type: "Production", created: may)
        ReportFixtures.receipt(&t, bundle: "com.a", type: "Production", status: 21003, created: may)
        ReportFixtures.receipt(&t, bundle: "com.a", type: "Sandbox", kind: "jws_transaction", created: april)
        ReportFixtures.receipt(&t, bundle: nil, type: nil, status: 21002, created: nil)
        let aggregator = ReportAggregator()
        aggregator.add(receipts: t)
        let d = aggregator.data
        #expect(d.records == 5 && d.valid == 3 && d.rejected == 2)
        #expect(
            d.apps == [
                .init(
                    bundleID: "com.a", environment: "Production", kind: "receipt", count: .init(valid: 2, rejected: 1)),
                .init(bundleID: nil, environment: nil, kind: "receipt", count: .init(valid: 0, rejected: 1)),
                .init(bundleID: "com.a", environment: "Sandbox", kind: "jws", count: .init(valid: 1, rejected: 0)),
            ])
        #expect(
            d.months == [
                .init(month: "2023-04", count: .init(valid: 2, rejected: 0)),
                .init(month: "2023-05", count: .init(valid: 1, rejected: 1)),
            ])
        #expect(d.undated == .init(valid: 0, rejected: 1))
        #expect(d.newestValid == may)
        #expect(d.subscriptions == nil && d.activity == nil)
    }

    @Test func aNullBundleAndAnEmptyOneAreDifferentApps() {
        var t = ColumnTable(schema: .receipts)
        ReportFixtures.receipt(&t, bundle: "", type: "Production", created: nil)
        ReportFixtures.receipt(&t, bundle: nil, type: "Production", created: nil)
        let aggregator = ReportAggregator()
        aggregator.add(receipts: t)
        #expect(aggregator.data.apps.count == 2)
    }

    @Test func appsBeyondTheCapAreCountedTogether() {
        var t = ColumnTable(schema: .receipts)
        for i in 0..<(ReportData.maxKeys + 3) {
            ReportFixtures.receipt(
                &t, bundle: "com.app\(i)", type: "Production", created: ReportFixtures.date(2020, 1, 1))
        }
        let aggregator = ReportAggregator()
        aggregator.add(receipts: t)
        let d = aggregator.data
        #expect(d.apps.count == ReportData.maxKeys)
        #expect(d.otherApps == .init(valid: 3, rejected: 0))
        #expect(d.apps.map(\.count.total).reduce(0, +) + d.otherApps.total == d.records)
    }

    @Test func aMegabyteBundleIDIsCutSoTheAggregatesStaySmall() {
        var t = ColumnTable(schema: .receipts)
        let huge = String(repeating: "é", count: 500_000)
        ReportFixtures.receipt(&t, bundle: huge, type: "Production", created: nil)
        ReportFixtures.receipt(&t, bundle: huge + "x", type: "Production", created: nil)
        let aggregator = ReportAggregator()
        aggregator.add(receipts: t)
        let d = aggregator.data
        // Both share their first 200 bytes: one row, its name cut and marked.
        #expect(d.apps.count == 1 && d.apps[0].count.valid == 2)
        #expect(d.apps[0].bundleID == String(repeating: "é", count: 100) + "…")
        #expect(d.encoded().count < 2000)
    }

    @Test func subscriptionsAreCountedByEnvironmentStateAndProduct() {
        var s = ColumnTable(schema: .subscriptions)
        let jan = ReportFixtures.date(2022, 1, 3)
        ReportFixtures.subscription(&s, environment: "Production", product: "monthly", state: "active", first: jan)
        ReportFixtures.subscription(&s, environment: "Production", product: "monthly", state: "unknown", first: jan)
        ReportFixtures.subscription(&s, environment: "Sandbox", product: "yearly", state: "active", first: jan)
        let aggregator = ReportAggregator()
        aggregator.expectSubscriptions()
        aggregator.observe(ColumnTable(schema: .purchases))
        aggregator.observe(s)
        let subs = aggregator.data.subscriptions
        #expect(subs?.rows == 3)
        #expect(
            subs?.byState == [
                .init(environment: "Production", state: "active", count: 1),
                .init(environment: "Production", state: "unknown", count: 1),
                .init(environment: "Sandbox", state: "active", count: 1),
            ])
        #expect(
            subs?.byProduct == [
                .init(productID: "monthly", active: 1, total: 2), .init(productID: "yearly", active: 1, total: 1),
            ])
        #expect(subs?.startsByMonth == [.init(month: "2022-01", value: 3)])
    }

    @Test func aDailyTableGivesActiveSubscriptionsPerDayAndEventsPerMonth() {
        let schema = TableSchema(
            name: "daily",
            [
                ("day", .timestampMillis, false), ("product_id", .string, false), ("active", .int64, false),
                ("starts", .int64, false), ("renewals", .int64, false),
            ])
        var t = ColumnTable(schema: schema)
        let d1 = ReportFixtures.date(2024, 2, 28)
        let d2 = ReportFixtures.date(2024, 3, 1)
        ReportFixtures.append(
            &t, strings: ["product_id": "m"], int64s: ["day": d1, "active": 5, "starts": 2, "renewals": 1])
        ReportFixtures.append(
            &t, strings: ["product_id": "y"], int64s: ["day": d1, "active": 1, "starts": 1, "renewals": 0])
        ReportFixtures.append(
            &t, strings: ["product_id": "m"], int64s: ["day": d2, "active": 6, "starts": 1, "renewals": 3])
        let aggregator = ReportAggregator()
        aggregator.observe(t)
        let a = aggregator.data.activity
        #expect(a?.products == ["m", "y"])
        #expect(a?.days.map(\.day) == ["2024-02-28", "2024-03-01"])
        #expect(a?.days.map(\.active) == [[5, 1], [6, 0]])
        var feb = ReportData.EventMonth(month: "2024-02")
        (feb.starts, feb.renewals) = (3, 1)
        var mar = ReportData.EventMonth(month: "2024-03")
        (mar.starts, mar.renewals) = (1, 3)
        #expect(a?.months == [feb, mar])
    }

    @Test func theAggregatesSurviveTheirJSONFile() {
        var t = ColumnTable(schema: .receipts)
        ReportFixtures.receipt(&t, bundle: "<script>", type: "Production", created: ReportFixtures.date(2021, 7, 4))
        ReportFixtures.receipt(&t, bundle: nil, type: nil, status: 21002, created: nil)
        var s = ColumnTable(schema: .subscriptions)
        ReportFixtures.subscription(&s, environment: "Production", product: "p", state: "expired", first: 0)
        let aggregator = ReportAggregator()
        aggregator.add(receipts: t)
        aggregator.observe(s)
        var d = aggregator.data
        d.trustAnchorSHA256 = ["ab12"]
        d.asOfGiven = true
        #expect(ReportData(json: d.encoded()) == d)
        #expect(ReportData(json: Array("{\"format_version\": 99}".utf8)) == nil)
    }
}
