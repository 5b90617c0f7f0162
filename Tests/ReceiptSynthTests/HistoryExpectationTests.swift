import ReceiptSynth
import Testing

/// The generator's expected history tables on hand-made receipts, one rule at a time.
@Suite struct HistoryExpectationTests {
    static let day: Int64 = 86_400_000
    /// 2020-09-13T12:26:40Z.
    static let t0: Int64 = 1_600_000_000_000

    struct Entry {
        var txn: String
        var original: String?
        var product = "app.sub.monthly"
        var purchased: Int64
        var expires: Int64?
        var cancelled: Int64? = nil
        var reason: Int64? = nil
        var trial = false
    }

    static func receipt(_ created: Int64, type: String = "Production", _ entries: [Entry]) -> ReceiptSpec {
        var s = ReceiptSpec()
        s.add(0, .utf8(type))
        s.add(2, .utf8("com.example.app"))
        s.add(12, .date(created, .zulu))
        for e in entries {
            var i = ReceiptSpec()
            i.add(1701, .integer(1))
            i.add(1702, .utf8(e.product))
            i.add(1703, .utf8(e.txn))
            i.add(1704, .date(e.purchased, .zulu))
            if let o = e.original { i.add(1705, .utf8(o)) }
            i.add(1708, .date(e.expires, .zulu))
            i.add(1712, .date(e.cancelled, .zulu))
            i.add(1713, .integer(e.trial ? 1 : 0))
            if let r = e.reason { i.add(1720, .integer(r)) }
            s.add(17, .inApp(i))
        }
        return s
    }

    /// The CSV's data rows as field lists keyed by the header.
    static func rows(_ csv: String) -> [[String: String]] {
        var lines = csv.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.removeLast() == "")
        let header = lines.removeFirst().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return lines.map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return Dictionary(uniqueKeysWithValues: zip(header, fields))
        }
    }

    @Test func aRefundSeenLateStaysKnownAndTheNewestOccurrenceGivesTheFacts() {
        var h = HistoryExpectation()
        let p = Entry(txn: "10", original: "10", purchased: Self.t0, expires: Self.t0 + 30 * Self.day)
        var refunded = p
        refunded.cancelled = Self.t0 + 2 * Self.day
        refunded.reason = 1
        var renamed = p
        renamed.product = "app.sub.renamed"
        // Line order differs from date order: recency is by creation date first.
        h.add(Self.receipt(Self.t0 + 3 * Self.day, [renamed]), kind: .valid, input: 0, line: 1)
        h.add(Self.receipt(Self.t0 + Self.day, [p]), kind: .valid, input: 0, line: 2)
        h.add(Self.receipt(Self.t0 + 2 * Self.day + 1000, [refunded]), kind: .valid, input: 0, line: 3)
        let rows = Self.rows(h.purchasesCSV(source: "in.ndjson"))
        #expect(rows.count == 1)
        #expect(rows[0]["product_id"] == "app.sub.renamed")
        #expect(rows[0]["cancellation_date"] == "2020-09-15T12:26:40.000Z")
        #expect(rows[0]["cancellation_reason"] == "1")
        #expect(rows[0]["first_seen"] == "2020-09-14T12:26:40.000Z")
        #expect(rows[0]["last_seen"] == "2020-09-16T12:26:40.000Z")
        #expect(rows[0]["occurrences"] == "3")
        #expect(rows[0]["line"] == "1")
        #expect(rows[0]["source"] == "in.ndjson")
        let subs = Self.rows(h.subscriptionsCSV(asOf: Self.t0 + 3 * Self.day))
        #expect(subs.count == 1)
        #expect(subs[0]["state"] == "revoked")
        #expect(subs[0]["latest_expires_date"] == "")
        #expect(subs[0]["cancelled_periods"] == "1")
    }

    @Test func equalDatesGoToTheLaterPositionAndXcodeAndInvalidReceiptsDoNotCount() {
        var h = HistoryExpectation()
        var a = Entry(txn: "7", original: "7", purchased: Self.t0, expires: nil)
        a.product = "app.first"
        var b = a
        b.product = "app.second"
        h.add(Self.receipt(Self.t0 + Self.day, [b]), kind: .valid, input: 0, line: 9)
        h.add(Self.receipt(Self.t0 + Self.day, [a]), kind: .valid, input: 1, line: 2)
        h.add(Self.receipt(Self.t0 + 5 * Self.day, [b]), kind: .flippedSignature, input: 1, line: 3)
        h.add(Self.receipt(Self.t0 + 6 * Self.day, type: "Xcode", [b]), kind: .valid, input: 1, line: 4)
        let rows = Self.rows(h.purchasesCSV(source: "s"))
        #expect(rows.count == 1)
        #expect(rows[0]["product_id"] == "app.first")
        #expect(rows[0]["occurrences"] == "2")
        #expect(rows[0]["last_seen"] == "2020-09-14T12:26:40.000Z")
        #expect(h.horizon == Self.t0 + Self.day)
        #expect(h.subscriptionsCSV(asOf: Self.t0).split(separator: "\n").count == 1)
    }

    @Test func statesFollowTheAsOfTime() {
        var h = HistoryExpectation()
        let month = 30 * Self.day
        let p1 = Entry(txn: "1", original: "1", purchased: Self.t0, expires: Self.t0 + month)
        let p2 = Entry(txn: "2", original: "1", purchased: Self.t0 + month, expires: Self.t0 + 2 * month)
        // A period without an original transaction id is a subscription of its own.
        let lone = Entry(txn: "5", original: nil, purchased: Self.t0, expires: Self.t0 + month, trial: true)
        h.add(Self.receipt(Self.t0 + month + 1000, [p1, p2, lone]), kind: .valid, input: 0, line: 1)
        func states(_ asOf: Int64) -> [String] { Self.rows(h.subscriptionsCSV(asOf: asOf)).map { $0["state"]! } }
        #expect(states(Self.t0 - 1) == ["not_started", "not_started"])
        #expect(states(Self.t0 + month + 5000) == ["active", "expired"])
        // After the last expiry: no receipt after it was seen, so a renewal may have happened unseen.
        #expect(states(Self.t0 + 3 * month) == ["unknown", "expired"])
        let rows = Self.rows(h.subscriptionsCSV(asOf: Self.t0))
        #expect(rows.map { $0["original_transaction_id"]! } == ["1", "5"])
        #expect(rows[0]["periods"] == "2")
        #expect(rows[1]["trial_periods"] == "1")
        // A receipt made after the last expiry turns unknown into expired.
        h.add(Self.receipt(Self.t0 + 2 * month + Self.day, [p1, p2]), kind: .valid, input: 0, line: 2)
        #expect(states(Self.t0 + 3 * month) == ["expired", "expired"])
    }
}
