/// Inline SVG charts for the report: no script, no external resource. Series are told apart by lightness and by
/// a pattern (solid dark, hatched light, dotted) and carry text labels, so that they survive a greyscale print.
/// Every bar has a `<title>` with its exact numbers.
public enum SVGChart {
    /// How a bar or line is drawn.
    public enum Style: String, Sendable {
        /// Dark and solid: valid records, the main series.
        case solid
        /// Light with diagonal hatching: rejected records.
        case hatched
        /// Medium with dots: a third series.
        case dotted

        var fill: String {
            switch self {
            case .solid: return "#1d4e89"
            case .hatched: return "url(#rf-hatch)"
            case .dotted: return "url(#rf-dots)"
            }
        }
    }

    /// The patterns the charts refer to, defined once per page (an invisible SVG at the top of the body).
    public static let definitions = """
        <svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>\
        <pattern id="rf-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">\
        <rect width="6" height="6" fill="#f6c177"/><line x1="0" y1="0" x2="0" y2="6" stroke="#8a4b00" \
        stroke-width="2"/></pattern>\
        <pattern id="rf-dots" width="6" height="6" patternUnits="userSpaceOnUse">\
        <rect width="6" height="6" fill="#9fc5e8"/><circle cx="3" cy="3" r="1.4" fill="#1d4e89"/></pattern>\
        </defs></svg>
        """

    /// One bar of a horizontal bar chart.
    public struct Bar: Sendable {
        public var label: String
        public var value: Int
        public var style: Style
        /// Shown after the value (a share, say).
        public var note: String
        public init(label: String, value: Int, style: Style = .solid, note: String = "") {
            self.label = label
            self.value = value
            self.style = style
            self.note = note
        }
    }

    /// Horizontal bars, one per row, each labelled with its name and value; `axis` names what the bars count.
    public static func horizontalBars(_ bars: [Bar], axis: String) -> String {
        let rowHeight = 26.0
        let labelWidth = 230.0
        let width = 860.0
        let plotWidth = width - labelWidth - 170
        let height = Double(bars.count) * rowHeight + 40
        let top = Double(bars.map(\.value).max() ?? 0)
        var s = svgOpen(width: width, height: height, label: axis)
        for (i, bar) in bars.enumerated() {
            let y = Double(i) * rowHeight + 6
            let w = top > 0 ? max(Double(bar.value) / top * plotWidth, bar.value > 0 ? 1 : 0) : 0
            let text = HTMLText.number(bar.value) + (bar.note.isEmpty ? "" : "  (\(bar.note))")
            s +=
                "<text x=\"\(f(labelWidth - 8))\" y=\"\(f(y + 15))\" text-anchor=\"end\">\(HTMLText.escape(clip(bar.label, 34)))</text>"
            s += "<rect x=\"\(f(labelWidth))\" y=\"\(f(y))\" width=\"\(f(w))\" height=\"\(f(rowHeight - 8))\" "
            s += "fill=\"\(bar.style.fill)\" stroke=\"#333\" stroke-width=\"0.5\">"
            s += "<title>\(HTMLText.escape(bar.label)): \(text)</title></rect>"
            s += "<text x=\"\(f(labelWidth + w + 6))\" y=\"\(f(y + 15))\">\(HTMLText.escape(text))</text>"
        }
        let axisY = Double(bars.count) * rowHeight + 10
        s += "<line x1=\"\(f(labelWidth))\" y1=\"4\" x2=\"\(f(labelWidth))\" y2=\"\(f(axisY))\" stroke=\"#333\"/>"
        s += "<text x=\"\(f(labelWidth))\" y=\"\(f(axisY + 20))\" class=\"axis\">\(HTMLText.escape(axis)) →</text>"
        return s + "</svg>"
    }

    /// One column of a column chart: a label on the x axis and one value per series.
    public struct Column: Sendable {
        public var label: String
        public var values: [Int]
        public init(label: String, values: [Int]) {
            self.label = label
            self.values = values
        }
    }

    /// Stacked columns (one stack per column, `series` bottom to top) with a labelled y axis (`yAxis`) and x axis
    /// (`xAxis`), a legend, and gridlines at round numbers.
    public static func stackedColumns(
        _ columns: [Column], series: [(name: String, style: Style)], xAxis: String, yAxis: String
    ) -> String {
        let width = 900.0
        let height = 330.0
        let left = 70.0
        let right = 10.0
        let top = 34.0
        let bottom = 70.0
        let plotW = width - left - right
        let plotH = height - top - bottom
        let maxTotal = columns.map { $0.values.reduce(0, +) }.max() ?? 0
        let (step, ceiling) = ticks(maxTotal)
        var s = svgOpen(width: width, height: height, label: yAxis + " by " + xAxis)
        // Legend.
        var lx = left
        for entry in series {
            s += "<rect x=\"\(f(lx))\" y=\"6\" width=\"14\" height=\"14\" fill=\"\(entry.style.fill)\" stroke=\"#333\" "
            s += "stroke-width=\"0.5\"/><text x=\"\(f(lx + 20))\" y=\"18\">\(HTMLText.escape(entry.name))</text>"
            lx += 30 + Double(entry.name.count) * 7.5
        }
        // Gridlines and y labels.
        var v = 0
        while v <= ceiling {
            let y = top + plotH - Double(v) / Double(max(ceiling, 1)) * plotH
            s += "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(width - right))\" y2=\"\(f(y))\" stroke=\"#ccc\" "
            s += "stroke-width=\"0.5\"/><text x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">"
            s += "\(HTMLText.number(v))</text>"
            v += step
        }
        let slot = columns.isEmpty ? plotW : plotW / Double(columns.count)
        let barW = max(slot * 0.8, 1)
        let labelEvery = max(1, Int((Double(columns.count) * 48 / plotW).rounded(.up)))
        for (i, c) in columns.enumerated() {
            let x = left + Double(i) * slot + (slot - barW) / 2
            var base = 0
            var title = HTMLText.escape(c.label) + ":"
            for (k, n) in c.values.enumerated() where k < series.count {
                title += " \(HTMLText.number(n)) \(HTMLText.escape(series[k].name))" + (k + 1 < series.count ? "," : "")
            }
            for (k, n) in c.values.enumerated() where k < series.count && n > 0 {
                let y0 = top + plotH - Double(base) / Double(max(ceiling, 1)) * plotH
                let y1 = top + plotH - Double(base + n) / Double(max(ceiling, 1)) * plotH
                s += "<rect x=\"\(f(x))\" y=\"\(f(y1))\" width=\"\(f(barW))\" height=\"\(f(max(y0 - y1, 0.5)))\" "
                s +=
                    "fill=\"\(series[k].style.fill)\" stroke=\"#333\" stroke-width=\"0.3\"><title>\(title)</title></rect>"
                base += n
            }
            if i % labelEvery == 0 {
                let lxc = x + barW / 2
                s += "<text x=\"\(f(lxc))\" y=\"\(f(top + plotH + 12))\" text-anchor=\"end\" "
                s += "transform=\"rotate(-45 \(f(lxc)) \(f(top + plotH + 12)))\">\(HTMLText.escape(c.label))</text>"
            }
        }
        s += axes(left: left, top: top, plotW: plotW, plotH: plotH, height: height, xAxis: xAxis, yAxis: yAxis)
        return s + "</svg>"
    }

    /// Lines over days (one per series, told apart by dash pattern and a label at the line's end), with labelled
    /// axes; `days` are the x labels, in order, and each holds one value per series.
    public static func lines(
        days: [(day: String, values: [Int])], series: [String], xAxis: String, yAxis: String
    ) -> String {
        let width = 900.0
        let height = 360.0
        let left = 70.0
        let right = 170.0
        let top = 16.0
        let bottom = 95.0
        let plotW = width - left - right
        let plotH = height - top - bottom
        let maxValue = days.flatMap(\.values).max() ?? 0
        let (step, ceiling) = ticks(maxValue)
        var s = svgOpen(width: width, height: height, label: yAxis + " by " + xAxis)
        var v = 0
        while v <= ceiling {
            let y = top + plotH - Double(v) / Double(max(ceiling, 1)) * plotH
            s += "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(left + plotW))\" y2=\"\(f(y))\" stroke=\"#ccc\" "
            s += "stroke-width=\"0.5\"/><text x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">"
            s += "\(HTMLText.number(v))</text>"
            v += step
        }
        let dashes = ["", "6 3", "2 2", "8 3 2 3", "1 3", "10 4", "4 2 1 2", "12 2", "3 6"]
        let greys = ["#000", "#1d4e89", "#555", "#8a4b00", "#333", "#4f7cac", "#777", "#222", "#999"]
        let dx = days.count > 1 ? plotW / Double(days.count - 1) : 0
        for (k, name) in series.enumerated() {
            var points = ""
            for (i, d) in days.enumerated() where k < d.values.count {
                let y = top + plotH - Double(d.values[k]) / Double(max(ceiling, 1)) * plotH
                points += "\(f(left + Double(i) * dx)),\(f(y)) "
            }
            let last = days.last.map { k < $0.values.count ? $0.values[k] : 0 } ?? 0
            let ly = top + plotH - Double(last) / Double(max(ceiling, 1)) * plotH
            s +=
                "<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(greys[k % greys.count])\" stroke-width=\"1.6\" "
            s += "stroke-dasharray=\"\(dashes[k % dashes.count])\"><title>\(HTMLText.escape(name))</title></polyline>"
            s += "<text x=\"\(f(left + plotW + 6))\" y=\"\(f(ly + 4))\">\(HTMLText.escape(clip(name, 24))) "
            s += "(\(HTMLText.number(last)))</text>"
        }
        let labelEvery = max(1, Int((Double(days.count) * 60 / plotW).rounded(.up)))
        for (i, d) in days.enumerated() where i % labelEvery == 0 {
            let x = left + Double(i) * dx
            s += "<text x=\"\(f(x))\" y=\"\(f(top + plotH + 12))\" text-anchor=\"end\" "
            s += "transform=\"rotate(-45 \(f(x)) \(f(top + plotH + 12)))\">\(HTMLText.escape(d.day))</text>"
        }
        s += axes(left: left, top: top, plotW: plotW, plotH: plotH, height: height, xAxis: xAxis, yAxis: yAxis)
        return s + "</svg>"
    }

    // MARK: - Parts

    private static func svgOpen(width: Double, height: Double, label: String) -> String {
        "<svg class=\"chart\" viewBox=\"0 0 \(f(width)) \(f(height))\" role=\"img\" "
            + "aria-label=\"\(HTMLText.escape(label))\" xmlns=\"http://www.w3.org/2000/svg\">"
    }

    private static func axes(
        left: Double, top: Double, plotW: Double, plotH: Double, height: Double, xAxis: String, yAxis: String
    ) -> String {
        var s = "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotH))\" stroke=\"#333\"/>"
        s += "<line x1=\"\(f(left))\" y1=\"\(f(top + plotH))\" x2=\"\(f(left + plotW))\" y2=\"\(f(top + plotH))\" "
        s += "stroke=\"#333\"/>"
        s += "<text class=\"axis\" x=\"\(f(left + plotW / 2))\" y=\"\(f(height - 4))\" text-anchor=\"middle\">"
        s += "\(HTMLText.escape(xAxis))</text>"
        let cy = top + plotH / 2
        s +=
            "<text class=\"axis\" x=\"14\" y=\"\(f(cy))\" text-anchor=\"middle\" transform=\"rotate(-90 14 \(f(cy)))\">"
        s += "\(HTMLText.escape(yAxis))</text>"
        return s
    }

    /// A round step (1, 2 or 5 times a power of ten) giving about four gridlines up to at least `maxValue`.
    static func ticks(_ maxValue: Int) -> (step: Int, ceiling: Int) {
        guard maxValue > 0 else { return (1, 1) }
        let raw = Double(maxValue) / 4
        var power = 1
        while Double(power) * 10 <= raw { power *= 10 }
        let step = [1, 2, 5, 10].map { $0 * power }.first { Double($0) >= raw } ?? power * 10
        let ceiling = (maxValue + step - 1) / step * step
        return (step, ceiling)
    }

    private static func f(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    private static func clip(_ s: String, _ n: Int) -> String { s.count <= n ? s : String(s.prefix(n - 1)) + "…" }
}
