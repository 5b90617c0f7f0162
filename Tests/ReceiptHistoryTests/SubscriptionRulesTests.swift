import Foundation
import ReceiptHistory
import ReceiptModel
import Testing

/// The `subscriptions` rules and the as-of states of docs/history.md on small hand-made cases.
@Suite("History subscriptions rules")
struct SubscriptionRulesTests {
    /// A monthly period of subscription `original`.
    func period(
        _ id: String, _ original: String?, start: Int64, product: String = "monthly", cancel: Int64? = nil,
        trial: Bool? = false, intro: Bool? = false
    ) -> Entry {
        Entry(
            transactionID: id, originalTransactionID: original, product: product, purchase: day(start),
            expires: day(start + 30), cancellation: cancel.map(day), reason: cancel == nil ? nil : 0, trial: trial,
            intro: intro)
    }

    func state(_ receipts: [Receipt], asOf: Int64? = nil) throws -> [String: String] {
        let (t, _) = try runHistory([(batch(receipts), 0)], asOf: asOf)
        #expect(t.subscriptions.count == 1)
        return try #require(t.subscriptions.first)
    }

    @Test("counts, first and latest product, dates and observed_through")
    func columns() throws {
        let r1 = Receipt(
            line: 1, created: day(40),
            entries: [period("1", "1", start: 0, trial: true), period("2", "1", start: 30, intro: nil)])
        let r2 = Receipt(
            line: 2, created: day(70),
            entries: [
                period("1", "1", start: 0, trial: true), period("2", "1", start: 30, cancel: 35),
                period("3", "1", start: 60, product: "annual", intro: true),
                Entry(transactionID: "4", originalTransactionID: "1", product: "coins", purchase: day(61)),
            ])
        let s = try state([r1, r2])
        #expect(s["original_transaction_id"] == "1")
        #expect(s["first_product_id"] == "monthly")
        #expect(s["latest_product_id"] == "annual")
        #expect(s["first_purchase_date"] == ts(day(0)))
        #expect(s["latest_purchase_date"] == ts(day(60)))
        #expect(s["latest_expires_date"] == ts(day(90)))
        #expect(s["periods"] == "3")
        #expect(s["trial_periods"] == "1")
        #expect(s["intro_periods"] == "1")
        #expect(s["cancelled_periods"] == "1")
        #expect(s["observed_through"] == ts(day(70)))
        // The default as-of is the horizon (day 70), inside the last period.
        #expect(s["state"] == "active")
    }

    @Test("each as-of state")
    func states() throws {
        let two = Receipt(
            line: 1, created: day(40), entries: [period("1", "1", start: 0), period("2", "1", start: 30)])
        #expect(try state([two], asOf: day(-1))["state"] == "not_started")
        #expect(try state([two], asOf: day(45))["state"] == "active")
        // Past the last expiry (day 60) with no receipt after it: a renewal may have happened unseen.
        #expect(try state([two], asOf: day(65))["state"] == "unknown")
        let later = Receipt(line: 2, created: day(70), entries: two.entries)
        #expect(try state([two, later], asOf: day(65))["state"] == "expired")
        // as-of changes only state: observed_through still counts the receipt made after it.
        #expect(try state([two, later], asOf: day(45))["observed_through"] == ts(day(70)))

        let refunded = Receipt(
            line: 3, created: day(50), entries: [period("1", "1", start: 0), period("2", "1", start: 30, cancel: 40)])
        #expect(try state([refunded], asOf: day(45))["state"] == "revoked")
        // A cancellation after A does not count at A: the period is still active then.
        #expect(try state([refunded], asOf: day(35))["state"] == "active")
        // A period purchased after A does not count.
        #expect(try state([refunded], asOf: day(20))["state"] == "active")
        #expect(try state([refunded])["latest_expires_date"] == ts(day(30)))
    }

    @Test("a period with a null original_transaction_id is its own group, keyed by its transaction id")
    func nullOriginal() throws {
        let r = Receipt(
            line: 1, created: day(10),
            entries: [period("5", nil, start: 0), period("6", nil, start: 1), period("7", "4", start: 2)])
        let (t, _) = try runHistory([(batch([r]), 0)])
        #expect(t.subscriptions.map { $0["original_transaction_id"] } == ["4", "5", "6"])
        #expect(t.subscriptions.map { $0["periods"] } == ["1", "1", "1"])
    }

    @Test("every cancelled period leaves latest_expires_date null; non-renewing purchases are not subscriptions")
    func allCancelled() throws {
        let r = Receipt(
            line: 1, created: day(50),
            entries: [period("1", "1", start: 0, cancel: 5), Entry(transactionID: "2", originalTransactionID: "2")])
        let (t, _) = try runHistory([(batch([r]), 0)])
        #expect(t.subscriptions.count == 1)
        #expect(t.subscriptions[0]["latest_expires_date"] == "")
        #expect(t.subscriptions[0]["state"] == "revoked")
    }
}
