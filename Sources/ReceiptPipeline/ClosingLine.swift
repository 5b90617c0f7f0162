import ReceiptModel

/// The last line of a completed export on standard error: receipts and JWS counted apart (valid and rejected),
/// the transactions, the purchase history (purchases, subscriptions by state, the as-of time) and where it went.
public enum ClosingLine {
    /// The states of the `subscriptions` table, in the order the line and `summary.json` give them.
    public static let subscriptionStates = [
        "active", "grace_period", "billing_retry", "revoked", "expired", "unknown", "not_started",
    ]

    /// The line for a run with counts `c`, its history (nil when not written) and its output `out`.
    public static func text(_ c: BatchCounts, history: HistorySummary?, out: String) -> String {
        var s = records(c)
        s += "; \(c.transactions) transaction\(c.transactions == 1 ? "" : "s")"
        if let h = history {
            s += "; \(h.purchases) purchase\(h.purchases == 1 ? "" : "s"), "
            s += "\(h.subscriptions) subscription\(h.subscriptions == 1 ? "" : "s")"
            let states = byState(h)
            let parts = states.filter { $0.count > 0 }.map { "\($0.count) \($0.state)" }
            if !parts.isEmpty { s += " (" + parts.joined(separator: ", ") + ")" }
            if let a = h.asOf { s += " as of \(isoTime(a))" }
        }
        return s + "; written to \(out)"
    }

    /// Subscriptions by state: every known state in order (zeros included), then any other state by name.
    public static func byState(_ h: HistorySummary) -> [(state: String, count: Int64)] {
        let counts = h.subscriptionsByState ?? [:]
        var rows = subscriptionStates.map { (state: $0, count: counts[$0] ?? 0) }
        for (state, n) in counts.sorted(by: { $0.key < $1.key }) where !subscriptionStates.contains(state) {
            rows.append((state, n))
        }
        return rows
    }

    /// "18 receipts: 16 valid, 2 rejected", "927 JWS: ...", or both apart when the run read both.
    static func records(_ c: BatchCounts) -> String {
        let receipts = c.receipts
        let receiptsValid = c.receiptsValid
        func plural(_ n: Int) -> String { n == 1 ? "" : "s" }
        if c.jws == 0 {
            return
                "\(receipts) receipt\(plural(receipts)): \(receiptsValid) valid, \(receipts - receiptsValid) rejected"
        }
        if receipts == 0 { return "\(c.jws) JWS: \(c.jwsValid) valid, \(c.jws - c.jwsValid) rejected" }
        return "\(c.records) records: \(receipts) receipt\(plural(receipts)) (\(receiptsValid) valid, "
            + "\(receipts - receiptsValid) rejected) and \(c.jws) JWS (\(c.jwsValid) valid, "
            + "\(c.jws - c.jwsValid) rejected)"
    }

    /// `2024-05-01T00:00:00.000Z` for epoch milliseconds.
    static func isoTime(_ ms: Int64) -> String {
        var text: [UInt8] = []
        CivilTime.appendISO8601(epochMillis: ms, into: &text)
        return String(decoding: text, as: UTF8.self)
    }
}
