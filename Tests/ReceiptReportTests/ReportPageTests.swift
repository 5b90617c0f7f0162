import ReceiptModel
import Testing

@testable import ReceiptReport

/// The page is self-contained, escapes every value from the data, and shows the sections its data allows.
@Suite struct ReportPageTests {
    static let summary = Array(
        """
        {"tool_version": "0.1.0", "inputs": ["in<1>.ndjson"], "format": "csv", "verify": true, "threads": 2,
         "records": 12345, "valid": 12000, "rejected": 345, "transactions_written": 40000, "blank_lines": 0,
         "bytes_read": 9000000, "by_status": {}, "by_error_code": {"untrusted_chain": 300, "invalid_json": 45,
         "bad_signature": 0}, "elapsed_seconds": 1.5, "receipts_per_second": 8230, "chain_cache": {"hits": 10,
         "misses": 2}, "as_of": "2024-05-01T00:00:00.000Z", "history": {"purchases": 7, "subscriptions": 3,
         "spilled_bytes": 0}}
        """.utf8)

    static func data() -> ReportData {
        var t = ColumnTable(schema: .receipts)
        ReportFixtures.receipt(&t, bundle: "<script>alert(1)</script>", type: "Production", created: 0)
        var s = ColumnTable(schema: .subscriptions)
        ReportFixtures.subscription(&s, environment: "Production", product: "<b>p</b>", state: "unknown", first: 0)
        let aggregator = ReportAggregator()
        aggregator.add(receipts: t)
        aggregator.observe(s)
        return aggregator.data
    }

    @Test func aHostileBundleIDIsShownAsTextNotMarkup() throws {
        let facts = try #require(RunFacts(summary: Self.summary))
        let html = ReportPage(facts: facts, data: Self.data(), committedAt: nil).html()
        #expect(!html.contains("<script"))
        #expect(!html.contains("<b>p"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("in&lt;1&gt;.ndjson"))
    }

    @Test func thePageIsSelfContainedAndFormatsNumbers() throws {
        let facts = try #require(RunFacts(summary: Self.summary))
        let html = ReportPage(facts: facts, data: Self.data(), committedAt: "2024-05-02 10:00 UTC").html()
        #expect(!html.contains("src=") && !html.contains("<link"))
        #expect(html.contains("data-metric=\"records\">12,345<"))
        #expect(html.contains("97.2%"))
        // Codes with rejections are explained; codes with none are not listed.
        #expect(html.contains("data-code=\"untrusted_chain\""))
        #expect(html.contains(ErrorExplanations.explain(.untrustedChain).action.prefix(40)))
        #expect(!html.contains("data-code=\"bad_signature\""))
        #expect(html.contains("@media print"))
        #expect(html.contains("data-state=\"unknown\""))
    }

    @Test func withoutReportDataTheBreakdownsSaySoAndADailyTableAddsItsSection() throws {
        let facts = try #require(RunFacts(summary: Self.summary))
        let bare = ReportPage(facts: facts, data: nil, committedAt: nil).html()
        #expect(bare.contains("Not recorded for this run"))
        #expect(!bare.contains("Active subscriptions per day"))
        var data = Self.data()
        #expect(
            ReportPage(facts: facts, data: data, committedAt: nil).html().contains("need the run's <code>daily</code>"))
        var activity = ReportData.Activity()
        activity.products = ["p"]
        activity.days = [("2024-01-01", [3]), ("2024-01-02", [4])]
        activity.months = [ReportData.EventMonth(month: "2024-01")]
        data.activity = activity
        let html = ReportPage(facts: facts, data: data, committedAt: nil).html()
        #expect(html.contains("Active subscriptions per day"))
        #expect(html.contains("<polyline"))
    }
}
