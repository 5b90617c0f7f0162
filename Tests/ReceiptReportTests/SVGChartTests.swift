import Testing

@testable import ReceiptReport

/// The charts: round gridlines, labels escaped, and every bar titled with its exact numbers.
@Suite struct SVGChartTests {
    @Test func gridlinesFallOnRoundNumbersAboveTheLargestValue() {
        #expect(SVGChart.ticks(0) == (1, 1))
        #expect(SVGChart.ticks(42) == (20, 60))
        #expect(SVGChart.ticks(1_000) == (500, 1_000))
        #expect(SVGChart.ticks(9_999_999).ceiling >= 9_999_999)
        for n in [1, 7, 99, 123_456] {
            let t = SVGChart.ticks(n)
            #expect(t.ceiling >= n && t.ceiling / t.step <= 5, "\(n)")
        }
    }

    @Test func barsAreLabelledAndTitledWithEscapedText() {
        let svg = SVGChart.horizontalBars([.init(label: "<evil>", value: 1234, note: "5.0%")], axis: "records")
        #expect(svg.contains("&lt;evil&gt;"))
        #expect(!svg.contains("<evil>"))
        #expect(svg.contains("<title>&lt;evil&gt;: 1,234  (5.0%)</title>"))
        let columns = SVGChart.stackedColumns(
            [.init(label: "2024-01", values: [10, 2])], series: [("valid", .solid), ("rejected", .hatched)],
            xAxis: "month", yAxis: "records")
        #expect(columns.contains("<title>2024-01: 10 valid, 2 rejected</title>"))
        #expect(columns.contains("url(#rf-hatch)"))
        #expect(columns.contains(">month</text>") && columns.contains(">records</text>"))
    }
}
