import Foundation
import ReceiptHistory
import ReceiptModel
import Testing

/// The rules of the `events` table (docs/history.md, "Subscription events") on small hand-made cases.
@Suite("History events rules")
struct SubscriptionEventsTests {
    func period(
        _ id: String, start: Int64?, days: Int64 = 30, product: String = "monthly", cancel: Int64? = nil,
        reason: Int32? = nil, trial: Bool? = false, intro: Bool? = false
    ) -> Entry {
        Entry(
            transactionID: id, originalTransactionID: "1", product: product, purchase: start,
            expires: (start ?? day(0)) + days * 86_400_000, cancellation: cancel, reason: reason, trial: trial,
            intro: intro)
    }

    func events(
        _ entries: [Entry], created: Int64, renewals: [Renewal] = [], asOf: Int64? = nil
    ) throws -> [String] {
        let receipt = Receipt(line: 1, created: created, entries: entries)
        let (t, _) = try runHistory([(batch([receipt], renewals: renewals), 0)], asOf: asOf)
        #expect(t.result.events == Int64(t.events.count))
        return t.events.map { e in
            [
                e["event"]!, e["event_date"]!, e["transaction_id"]!, e["product_id"]!, e["previous_product_id"]!,
                e["offer"]!, e["period"]!, e["cancellation_reason"]!,
            ].joined(separator: " ")
        }
    }

    @Test("a trial converts to paid periods, renews, and expires once a later receipt shows no renewal")
    func trialConverts() throws {
        let got = try events(
            [
                period("1", start: day(0), days: 7, product: "monthly", trial: true),
                period("2", start: day(7), product: "monthly"), period("3", start: day(37), product: "monthly"),
            ], created: day(80))
        #expect(
            got == [
                "start_trial \(ts(day(0))) 1 monthly  free_trial 1 ",
                "convert \(ts(day(7))) 2 monthly monthly  2 ",
                "renew \(ts(day(37))) 3 monthly   3 ",
                "expire \(ts(day(67))) 3 monthly   3 ",
            ])
    }

    @Test("an upgrade at a renewal instant is a product change; the replaced renewal makes no event")
    func upgradeAtRenewal() throws {
        // The renewal bought on day 30 is cancelled that instant (no reason) by the upgrade bought with it.
        let got = try events(
            [
                period("1", start: day(0)), period("2", start: day(30), cancel: day(30)),
                period("3", start: day(30), days: 365, product: "annual", intro: true),
            ], created: day(40))
        #expect(
            got == [
                "subscribe \(ts(day(0))) 1 monthly   1 ",
                "product_change \(ts(day(30))) 3 annual monthly introductory 3 ",
            ])
    }

    @Test("a refund of the last period ends the run at the refund, with its reason")
    func refundOfTheLastPeriod() throws {
        let got = try events(
            [period("1", start: day(0)), period("2", start: day(30), cancel: day(40), reason: 1)], created: day(41))
        #expect(
            got == [
                "subscribe \(ts(day(0))) 1 monthly   1 ",
                "renew \(ts(day(30))) 2 monthly   2 ",
                "expire \(ts(day(40))) 2 monthly   2 ",
                "refund \(ts(day(40))) 2 monthly   2 1",
            ])
    }

    @Test("a gap of one second starts a new run: the run before it expires, the next reactivates")
    func gapOfOneSecond() throws {
        let got = try events(
            [period("1", start: day(0)), period("2", start: day(30) + 1000, days: 365, product: "annual")],
            created: day(35))
        #expect(
            got == [
                "subscribe \(ts(day(0))) 1 monthly   1 ",
                "expire \(ts(day(30))) 1 monthly   1 ",
                "reactivate \(ts(day(30) + 1000)) 2 annual monthly  2 ",
            ])
        // Starting at the very instant the run ends continues it.
        let joined = try events([period("1", start: day(0)), period("2", start: day(30))], created: day(35))
        #expect(joined.map { $0.split(separator: " ")[0] } == ["subscribe", "renew"])
    }

    @Test("a renewal info with an expiration intent signed after the run's end proves the expiry")
    func renewalInfoProvesTheExpiry() throws {
        let periods = [period("1", start: day(0)), period("2", start: day(30))]
        // The receipt predates the end (day 60): nothing proves it.
        #expect(try events(periods, created: day(40)).count == 2)
        var intent = Renewal(line: 2, originalTransactionID: "1", signed: day(61))
        intent.expirationIntent = 1
        #expect(
            try events(periods, created: day(40), renewals: [intent]).last == "expire \(ts(day(60))) 2 monthly   2 ")
        // Signed before the end, or without an intent: still no expiry.
        var early = intent
        early.signed = day(59)
        #expect(try events(periods, created: day(40), renewals: [early]).count == 2)
        var noIntent = intent
        noIntent.expirationIntent = nil
        #expect(try events(periods, created: day(40), renewals: [noIntent]).count == 2)
    }

    @Test("a period without a purchase date makes no event but counts in the period numbers")
    func nullPurchaseDate() throws {
        let got = try events(
            [period("0", start: nil, cancel: day(3), reason: 0), period("1", start: day(0), intro: true)],
            created: day(10))
        #expect(got == ["start_intro_offer \(ts(day(0))) 1 monthly  introductory 2 "])
    }

    @Test("events do not depend on the as-of time")
    func asOfLeavesEventsAlone() throws {
        let periods = [period("1", start: day(0)), period("2", start: day(30), cancel: day(40), reason: 1)]
        #expect(try events(periods, created: day(41), asOf: day(5)) == events(periods, created: day(41)))
    }
}
