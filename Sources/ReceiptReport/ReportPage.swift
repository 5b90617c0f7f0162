import ReceiptModel

/// The report of one run as one self-contained HTML page: inline CSS and SVG, no script and no external resource,
/// printable. Made from the run's `summary.json` (`RunFacts`) and, when the run wrote it, `report-data.json`
/// (`ReportData`); without the latter the sections that need it say so.
public struct ReportPage {
    public var facts: RunFacts
    public var data: ReportData?
    /// When the run was committed, as text (the time `summary.json` was written); nil when unknown.
    public var committedAt: String?

    public init(facts: RunFacts, data: ReportData?, committedAt: String?) {
        self.facts = facts
        self.data = data
        self.committedAt = committedAt
    }

    /// The page's bytes (UTF-8).
    public func rendered() -> [UInt8] { Array(html().utf8) }

    public func html() -> String {
        var s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        s += "<title>receiptflow report: \(HTMLText.number(facts.records)) records</title>"
        s += "<style>\(Self.css)</style></head><body>\n"
        s += SVGChart.definitions + "\n"
        s += "<h1>Receipt validation report</h1>\n"
        s += run() + funnel() + rejections() + apps() + months() + subscriptions() + throughput()
        s += "<footer>Made by receiptflow \(HTMLText.escape(ReceiptflowVersion.string)) from the run's summary.json"
        s += data == nil ? "" : " and \(ReportData.fileName)"
        s += ". Times are UTC.</footer>\n</body></html>\n"
        return s
    }

    // MARK: - Sections

    private func run() -> String {
        var rows: [(String, String)] = []
        rows.append(("Inputs", facts.inputs.map { "<code>\(HTMLText.escape($0))</code>" }.joined(separator: "<br>")))
        rows.append(("Committed", committedAt.map(HTMLText.escape) ?? "unknown"))
        rows.append(("Tool version", HTMLText.escape(facts.toolVersion)))
        rows.append(("Table format", HTMLText.escape(facts.format) + (facts.parts.map { ", in \($0) parts" } ?? "")))
        rows.append(
            (
                "Verification",
                facts.verify
                    ? "on: signatures and certificate chains checked"
                    : "<strong>off</strong> (<code>--no-verify</code>): records were decoded, not authenticated"
            ))
        var anchors = "not recorded for this run"
        if let data {
            if !facts.verify {
                anchors = "none (verification off)"
            } else if data.trustAnchorSHA256.isEmpty {
                anchors = "Apple's built-in roots (Apple Inc. Root, Apple Root CA - G3)"
            } else {
                anchors =
                    "given with <code>--trust-anchor</code>, SHA-256:<br>"
                    + data.trustAnchorSHA256.map { "<code>\(HTMLText.escape($0))</code>" }.joined(separator: "<br>")
            }
        }
        rows.append(("Trust anchors", anchors))
        var asOf = "no history tables written (<code>--no-history</code>)"
        if facts.hasHistory {
            if let a = facts.asOf {
                let how =
                    data.map { $0.asOfGiven ? "given with <code>--as-of</code>" : "the data horizon" }
                    ?? "given or the data horizon"
                asOf = "<span data-metric=\"as_of\">\(HTMLText.escape(a))</span> (\(how))"
            } else {
                asOf = "none: no receipt contributed to the history"
            }
        }
        rows.append(("As-of time of subscription states", asOf))
        if let newest = data?.newestValid {
            rows.append(("Data horizon", "newest valid record created " + HTMLText.escape(Self.time(newest))))
        }
        var s = "<section id=\"run\"><h2>The run</h2><table class=\"facts\">"
        for (k, v) in rows { s += "<tr><th scope=\"row\">\(k)</th><td>\(v)</td></tr>" }
        return s + "</table></section>\n"
    }

    private func funnel() -> String {
        let f = facts
        var s = "<section id=\"funnel\"><h2>Validity</h2>"
        s += "<p class=\"lead\"><span data-metric=\"valid_share\">\(HTMLText.percent(f.valid, of: f.records))</span> "
        s += "of the records are valid.</p>"
        s += SVGChart.horizontalBars(
            [
                .init(label: "records read", value: f.records, style: .dotted),
                .init(label: "valid", value: f.valid, style: .solid, note: HTMLText.percent(f.valid, of: f.records)),
                .init(
                    label: "rejected", value: f.rejected, style: .hatched,
                    note: HTMLText.percent(f.rejected, of: f.records)),
            ], axis: "records")
        s += "<table class=\"numbers\"><thead><tr><th>records</th><th>valid</th><th>rejected</th>"
        s += "<th>transactions</th><th>blank lines skipped</th></tr></thead><tbody><tr>"
        s += cell("records", f.records) + cell("valid", f.valid) + cell("rejected", f.rejected)
        s += cell("transactions", f.transactions) + cell("blank_lines", f.blankLines)
        return s + "</tr></tbody></table></section>\n"
    }

    private func rejections() -> String {
        var s = "<section id=\"rejections\"><h2>Rejections by error code</h2>"
        let codes = facts.byErrorCode.filter { $0.count > 0 }.sorted {
            $0.count != $1.count ? $0.count > $1.count : $0.code < $1.code
        }
        guard !codes.isEmpty else { return s + "<p>No record was rejected.</p></section>\n" }
        s += SVGChart.horizontalBars(
            codes.map {
                .init(
                    label: $0.code, value: $0.count, style: .hatched,
                    note: HTMLText.percent($0.count, of: facts.records))
            }, axis: "rejected records")
        s += "<table class=\"codes\"><thead><tr><th>error code</th><th>status</th><th>records</th>"
        s += "<th>share of records</th><th>what it means</th><th>what to do</th></tr></thead><tbody>"
        for c in codes {
            let code = ErrorCode(rawValue: c.code)
            let e = code.map(ErrorExplanations.explain)
            var status = code.map { String($0.status.rawValue) } ?? ""
            if code == .wrongEnvironment { status = "21007 / 21008" }
            s += "<tr data-code=\"\(HTMLText.escape(c.code))\"><td><code>\(HTMLText.escape(c.code))</code></td>"
            s += "<td>\(status)</td><td class=\"num\">\(HTMLText.number(c.count))</td>"
            s += "<td class=\"num\">\(HTMLText.percent(c.count, of: facts.records))</td>"
            s += "<td>\(HTMLText.escape(e?.meaning ?? "A code this version of the report does not know."))</td>"
            s += "<td>\(HTMLText.escape(e?.action ?? "See the tool's documentation of error codes."))</td></tr>"
        }
        return s + "</tbody></table></section>\n"
    }

    private func apps() -> String {
        var s = "<section id=\"apps\"><h2>Records by app and environment</h2>"
        guard let data else { return s + notRecorded() + "</section>\n" }
        let none = "<em>none</em>"
        func code(_ v: String?) -> String { v.map { "<code>\(HTMLText.escape($0))</code>" } ?? none }
        s += "<p>The app is the record's bundle id and the environment its <code>receipt_type</code>; <em>none</em> "
        s += "is a record that names neither (one that could not be read, or a JWS renewal info).</p>"
        s += "<div class=\"side\">"
        s += groupTable(
            "app (bundle id)", "by-app", Self.grouped(data.apps, extra: data.otherApps) { $0.bundleID }, label: code)
        s += groupTable(
            "environment", "by-env", Self.grouped(data.apps, extra: data.otherApps) { $0.environment },
            label: { $0.map(HTMLText.escape) ?? none })
        s += "</div><details><summary>Every app, environment and kind</summary>"
        s += "<table class=\"apps\"><thead><tr><th>app (bundle id)</th><th>environment</th><th>kind</th>"
        s += "<th>valid</th><th>rejected</th><th>records</th><th>valid share</th></tr></thead><tbody>"
        for a in data.apps {
            let key = "\(a.bundleID ?? "")|\(a.environment ?? "")|\(a.kind)"
            s += "<tr data-app=\"\(HTMLText.escape(key))\"><td>\(code(a.bundleID))</td>"
            s += "<td>\(a.environment.map(HTMLText.escape) ?? none)</td>"
            s += "<td>\(a.kind == "jws" ? "StoreKit 2 JWS" : "receipt")</td>"
            s += countCells(a.count) + "</tr>"
        }
        if data.otherApps.total > 0 {
            s += "<tr data-app=\"other\"><td colspan=\"3\"><em>other apps (beyond \(ReportData.maxKeys))</em></td>"
            s += countCells(data.otherApps) + "</tr>"
        }
        return s + "</tbody></table></details></section>\n"
    }

    /// The rows of `apps` summed by `key`, most records first; `extra` (apps beyond the cap) under the key nil.
    static func grouped(
        _ apps: [ReportData.AppRow], extra: ReportData.Count, by key: (ReportData.AppRow) -> String?
    ) -> [(key: String?, count: ReportData.Count)] {
        var sums: [String?: ReportData.Count] = [:]
        for a in apps {
            sums[key(a), default: ReportData.Count()].valid += a.count.valid
            sums[key(a), default: ReportData.Count()].rejected += a.count.rejected
        }
        if extra.total > 0 {
            sums[nil, default: ReportData.Count()].valid += extra.valid
            sums[nil, default: ReportData.Count()].rejected += extra.rejected
        }
        return sums.map { ($0.key, $0.value) }.sorted {
            $0.count.total != $1.count.total ? $0.count.total > $1.count.total : ($0.key ?? "") < ($1.key ?? "")
        }
    }

    private func groupTable(
        _ title: String, _ id: String, _ rows: [(key: String?, count: ReportData.Count)], label: (String?) -> String
    ) -> String {
        var s = "<table class=\"\(id)\"><thead><tr><th>\(title)</th><th>valid</th><th>rejected</th><th>records</th>"
        s += "<th>valid share</th></tr></thead><tbody>"
        for r in rows {
            s +=
                "<tr data-\(id)=\"\(HTMLText.escape(r.key ?? ""))\"><td>\(label(r.key))</td>\(countCells(r.count))</tr>"
        }
        return s + "</tbody></table>"
    }

    private func months() -> String {
        var s = "<section id=\"months\"><h2>Records by creation month</h2>"
        guard let data else { return s + notRecorded() + "</section>\n" }
        guard !data.months.isEmpty else { return s + "<p>No record has a creation date.</p></section>\n" }
        s += SVGChart.stackedColumns(
            data.months.map { .init(label: $0.month, values: [$0.count.valid, $0.count.rejected]) },
            series: [("valid", .solid), ("rejected", .hatched)], xAxis: "creation month (UTC)", yAxis: "records")
        var notes: [String] = []
        if data.undated.total > 0 {
            notes.append(
                "<span data-metric=\"undated\">\(HTMLText.number(data.undated.total))</span> records without a "
                    + "creation date (\(HTMLText.number(data.undated.rejected)) of them rejected) are not charted.")
        }
        if data.otherMonths.total > 0 {
            notes.append(
                "\(HTMLText.number(data.otherMonths.total)) records in months beyond the first "
                    + "\(ReportData.maxKeys) seen are not charted.")
        }
        if !notes.isEmpty { s += "<p>" + notes.joined(separator: " ") + "</p>" }
        var years: [(year: String, count: ReportData.Count)] = []
        for m in data.months {
            let y = String(m.month.dropLast(3))  // YYYY-MM
            if years.last?.year == y {
                years[years.count - 1].count.valid += m.count.valid
                years[years.count - 1].count.rejected += m.count.rejected
            } else {
                years.append((y, m.count))
            }
        }
        s += "<table class=\"years\"><thead><tr><th>year</th><th>valid</th><th>rejected</th><th>records</th>"
        s += "<th>valid share</th></tr></thead><tbody>"
        for y in years {
            s += "<tr data-year=\"\(HTMLText.escape(y.year))\"><td>\(HTMLText.escape(y.year))</td>"
            s += countCells(y.count) + "</tr>"
        }
        s += "</tbody></table>"
        s += "<details><summary>The numbers by month</summary><table class=\"months\"><thead><tr><th>month</th>"
        s += "<th>valid</th><th>rejected</th><th>records</th><th>valid share</th></tr></thead><tbody>"
        for m in data.months {
            s += "<tr data-month=\"\(HTMLText.escape(m.month))\"><td>\(HTMLText.escape(m.month))</td>"
            s += countCells(m.count) + "</tr>"
        }
        return s + "</tbody></table></details></section>\n"
    }

    private func subscriptions() -> String {
        var s = "<section id=\"subscriptions\"><h2>Subscriptions</h2>"
        guard facts.hasHistory else {
            return s + "<p>This run did not write the history tables (<code>--no-history</code>).</p></section>\n"
        }
        s += "<p><span data-metric=\"purchases\">\(HTMLText.number(facts.purchases))</span> purchases and "
        s += "<span data-metric=\"subscriptions\">\(HTMLText.number(facts.subscriptions))</span> auto-renewable "
        s += "subscriptions, each in its state at the as-of time"
        s += facts.asOf.map { " (\(HTMLText.escape($0)))" } ?? ""
        s += ".</p>"
        guard let subs = data?.subscriptions else { return s + notRecorded() + "</section>\n" }
        s += stateTable(subs)
        if let activity = data?.activity {
            s += activitySection(activity)
        } else {
            s += "<h3>Subscriptions by product</h3>"
            s += "<p class=\"note\">Active subscriptions per day need the run's <code>daily</code> table, which this "
            s += "run does not have. Shown instead: each subscription's latest product with its state at the as-of "
            s += "time, and the month each subscription began.</p>"
            s += "<table class=\"products\"><thead><tr><th>latest product</th><th>active</th><th>subscriptions</th>"
            s += "<th>active share</th></tr></thead><tbody>"
            for p in subs.byProduct {
                s += "<tr data-product=\"\(HTMLText.escape(p.productID))\"><td><code>\(HTMLText.escape(p.productID))"
                s += "</code></td><td class=\"num\">\(HTMLText.number(p.active))</td>"
                s += "<td class=\"num\">\(HTMLText.number(p.total))</td>"
                s += "<td class=\"num\">\(HTMLText.percent(p.active, of: p.total))</td></tr>"
            }
            s += "</tbody></table>"
            if !subs.startsByMonth.isEmpty {
                s += "<h3>Subscriptions by the month they began</h3>"
                s += SVGChart.stackedColumns(
                    subs.startsByMonth.map { .init(label: $0.month, values: [$0.value]) },
                    series: [("subscriptions begun", .solid)], xAxis: "month of the first purchase (UTC)",
                    yAxis: "subscriptions")
            }
        }
        return s + "</section>\n"
    }

    private func stateTable(_ subs: ReportData.Subscriptions) -> String {
        let environments = Array(Set(subs.byState.map(\.environment))).sorted()
        let states = Array(Set(subs.byState.map(\.state))).sorted {
            (SubscriptionStates.rank($0), $0) < (SubscriptionStates.rank($1), $1)
        }
        func count(_ env: String?, _ state: String) -> Int {
            subs.byState.filter { $0.state == state && (env == nil || $0.environment == env) }.map(\.count).reduce(0, +)
        }
        var s = "<h3>By state</h3>"
        s += SVGChart.horizontalBars(
            states.map {
                .init(
                    label: $0, value: count(nil, $0),
                    style: $0 == "active" ? .solid : ($0 == "unknown" ? .hatched : .dotted),
                    note: HTMLText.percent(count(nil, $0), of: subs.rows))
            }, axis: "subscriptions")
        s += "<table class=\"states\"><thead><tr><th>state</th>"
        for e in environments { s += "<th>\(HTMLText.escape(e))</th>" }
        s += "<th>all</th><th>what it means</th></tr></thead><tbody>"
        for state in states {
            s += "<tr data-state=\"\(HTMLText.escape(state))\"><td><code>\(HTMLText.escape(state))</code></td>"
            for e in environments {
                s += "<td class=\"num\" data-env=\"\(HTMLText.escape(e))\">\(HTMLText.number(count(e, state)))</td>"
            }
            s += "<td class=\"num\" data-env=\"all\">\(HTMLText.number(count(nil, state)))</td>"
            let meaning =
                state == "unknown" ? "Not known from the records: see below." : SubscriptionStates.meaning(state)
            s += "<td>\(HTMLText.escape(meaning))</td></tr>"
        }
        s += "</tbody></table>"
        s += "<p class=\"note\"><strong><code>unknown</code></strong>: "
        s += HTMLText.escape(SubscriptionStates.meaning("unknown")) + " Count Sandbox apart from Production: test "
        s += "purchases are not revenue.</p>"
        return s
    }

    private func activitySection(_ a: ReportData.Activity) -> String {
        var s = "<h3>Active subscriptions per day, by product</h3>"
        s += SVGChart.lines(
            days: a.days.map { ($0.day, $0.active) }, series: a.products, xAxis: "day (UTC)",
            yAxis: "active subscriptions")
        s += "<h3>Events by month</h3><table class=\"events\"><thead><tr><th>month</th><th>starts</th>"
        s += "<th>conversions</th><th>renewals</th><th>refunds</th><th>expirations</th></tr></thead><tbody>"
        for m in a.months {
            s += "<tr data-event-month=\"\(HTMLText.escape(m.month))\"><td>\(HTMLText.escape(m.month))</td>"
            for v in [m.starts, m.conversions, m.renewals, m.refunds, m.expirations] {
                s += "<td class=\"num\">\(HTMLText.number(v))</td>"
            }
            s += "</tr>"
        }
        return s + "</tbody></table>"
    }

    private func throughput() -> String {
        let f = facts
        var s = "<section id=\"throughput\"><h2>Throughput</h2><table class=\"facts\">"
        let mbps = f.elapsedSeconds > 0 ? Double(f.bytesRead) / 1_000_000 / f.elapsedSeconds : 0
        let lookups = f.chainCacheHits + f.chainCacheMisses
        let rows: [(String, String)] = [
            ("Elapsed", "<span data-metric=\"elapsed_seconds\">\(HTMLText.decimal(f.elapsedSeconds))</span> s"),
            (
                "Records per second",
                "<span data-metric=\"receipts_per_second\">\(HTMLText.number(Int(f.receiptsPerSecond)))</span>"
            ),
            (
                "Input read",
                "<span data-metric=\"bytes_read\">\(HTMLText.number(f.bytesRead))</span> bytes "
                    + "(\(HTMLText.decimal(mbps)) MB/s)"
            ),
            ("Worker threads", HTMLText.number(f.threads)),
            (
                "Certificate chain cache",
                "\(HTMLText.number(f.chainCacheHits)) hits, \(HTMLText.number(f.chainCacheMisses)) misses"
                    + (lookups > 0 ? " (\(HTMLText.percent(f.chainCacheHits, of: lookups)) hits)" : "")
            ),
        ]
        for (k, v) in rows { s += "<tr><th scope=\"row\">\(k)</th><td>\(v)</td></tr>" }
        return s + "</table></section>\n"
    }

    // MARK: - Parts

    private func cell(_ metric: String, _ n: Int) -> String {
        "<td class=\"num\" data-metric=\"\(metric)\">\(HTMLText.number(n))</td>"
    }

    private func countCells(_ c: ReportData.Count) -> String {
        "<td class=\"num\">\(HTMLText.number(c.valid))</td><td class=\"num\">\(HTMLText.number(c.rejected))</td>"
            + "<td class=\"num\">\(HTMLText.number(c.total))</td>"
            + "<td class=\"num\">\(HTMLText.percent(c.valid, of: c.total))</td>"
    }

    private func notRecorded() -> String {
        "<p class=\"note\">Not recorded for this run: its folder has no \(ReportData.fileName) (a run written in "
            + "parts, or made by an older version). Export again without <code>--part-records</code> for this "
            + "section.</p>"
    }

    /// `ms` as `2024-05-01 12:00 UTC`.
    static func time(_ ms: Int64) -> String {
        var text: [UInt8] = []
        CivilTime.appendISO8601(epochMillis: ms, into: &text)
        let iso = String(decoding: text, as: UTF8.self)
        return iso.count >= 16 ? iso.prefix(10) + " " + iso.dropFirst(11).prefix(5) + " UTC" : iso
    }

    static let css = """
        body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;background:#fff;\
        max-width:1000px;margin:0 auto;padding:16px 24px}
        h1{font-size:26px;margin:8px 0 4px}h2{font-size:20px;border-bottom:2px solid #1d4e89;padding-bottom:2px;\
        margin-top:28px}h3{font-size:16px;margin:18px 0 6px}
        table{border-collapse:collapse;margin:8px 0;font-size:14px}th,td{border:1px solid #bbb;padding:3px 8px;\
        text-align:left;vertical-align:top}thead th{background:#e8eef6}td.num{text-align:right;\
        font-variant-numeric:tabular-nums;white-space:nowrap}table.facts th{background:#f3f3f3;width:220px}
        code{font:13px ui-monospace,Menlo,Consolas,monospace}td:first-child code{white-space:nowrap}\
        table.facts code{overflow-wrap:anywhere}.side{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}\
        summary{cursor:pointer;margin:6px 0;color:#1d4e89}
        svg.chart{width:100%;height:auto;font:12px system-ui,sans-serif;margin:6px 0}svg.chart .axis{font-weight:600}
        .lead{font-size:18px}.note{background:#f6f6f6;border-left:4px solid #777;padding:6px 10px}
        footer{margin-top:32px;color:#555;font-size:12px;border-top:1px solid #ccc;padding-top:6px}
        @media print{body{max-width:none;padding:0;font-size:11pt}section{break-inside:avoid-page}\
        h2{break-after:avoid}details{display:none}thead th,table.facts th{background:#eee}\
        @page{margin:14mm}}
        """
}
