import Foundation
import ReceiptHistory
import ReceiptModel
import Testing

/// The `daily` table (docs/history.md, "Daily activity"): a hand-made case, and its identities with the
/// `subscriptions` states over random corpora.
@Suite("History daily rules")
struct SubscriptionTimelineTests {
    static let snapshot = ["active", "grace_period", "billing_retry", "unknown"]

    @Test("a month of service: active through the day before it ends, the start and the expiry on their days")
    func oneMonth() throws {
        let receipt = Receipt(
            line: 1, created: day(40),
            entries: [
                Entry(transactionID: "1", originalTransactionID: "1", purchase: day(0) + 3_600_000, expires: day(30))
            ])
        let (t, _) = try runHistory([(batch([receipt]), 0)])
        let rows = t.daily
        #expect(t.result.daily == Int64(rows.count))
        // Days 0...28 end before the expiry; day 29 ends at it; day 30 holds the expiry event.
        let active = rows.filter { $0["active"] == "1" }.map { $0["day"]! }
        #expect(active == (0...28).map { dateText(day($0)) })
        #expect(rows.first?["starts"] == "1")
        #expect(rows.filter { $0["expirations"] == "1" }.map { $0["day"]! } == [dateText(day(30))])
        #expect(rows.count == 30)
        #expect(t.dailyCSV.hasPrefix("day,environment,bundle_id,product_id,active,active_trial,active_intro,"))
    }

    @Test(
        "the last day's snapshot is the subscriptions' state counts; any day's is an as-of export's", arguments: 0..<6)
    func identities(seed: UInt64) throws {
        var rng = Random(seed: seed + 1)
        let (receipts, renewals) = randomCorpus(&rng)
        let (t, _) = try runHistory([(batch(receipts, renewals: renewals), 0)])
        let days = t.daily.map { $0["day"]! }
        let last = dateText(try #require(t.result.asOf))
        #expect(summed(snapshotByProduct(t.daily, on: last)) == stateCounts(t.subscriptions))
        // A few days: the as-of export at that day's end has its states and its snapshot.
        let distinct = Array(Set(days)).sorted()
        for d in stride(from: 0, to: distinct.count, by: max(1, distinct.count / 5)).map({ distinct[$0] }) {
            let end = dayStart(d) + 86_400_000
            let (at, _) = try runHistory([(batch(receipts, renewals: renewals), 0)], asOf: end)
            #expect(summed(snapshotByProduct(t.daily, on: d)) == stateCounts(at.subscriptions), "\(d)")
            let lastOfAt = dateText(end)
            #expect(snapshotByProduct(at.daily, on: lastOfAt) == snapshotByProduct(t.daily, on: d), "\(d)")
        }
        // Flow columns count the events of their day.
        let flows = t.daily.reduce(0) { n, r in
            n
                + ["starts", "reactivations", "conversions", "renewals", "product_changes", "refunds", "expirations"]
                .reduce(0) { $0 + Int(r[$1]!)! }
        }
        let horizon = t.result.asOf!
        let starts = t.subscriptions.compactMap { s in s["first_purchase_date"] }.filter { !$0.isEmpty }.min()!
        let counted = t.events.filter { e in e["event_date"]! <= ts(horizon) && e["event_date"]! >= starts.prefix(10) }
        #expect(flows == counted.count)
    }

    @Test("the random corpora reach every snapshot column and every event the identities are checked on")
    func corporaCoverTheColumns() throws {
        var columns: Set<String> = []
        var events: Set<String> = []
        for seed in 0..<6 as Range<UInt64> {
            var rng = Random(seed: seed + 1)
            let (receipts, renewals) = randomCorpus(&rng)
            let (t, _) = try runHistory([(batch(receipts, renewals: renewals), 0)])
            for r in t.daily {
                for c in Self.snapshot + ["active_trial", "active_intro"] where r[c] != "0" { columns.insert(c) }
            }
            for e in t.events { events.insert(e["event"]!) }
        }
        #expect(columns == Set(Self.snapshot + ["active_trial", "active_intro"]))
        #expect(
            events.isSuperset(of: [
                "subscribe", "start_trial", "reactivate", "convert", "renew", "product_change", "refund", "expire",
            ]), "\(events)")
    }

    @Test("the four tables are the same whatever the memory budget and batches", arguments: 0..<3)
    func sameBytes(seed: UInt64) throws {
        var rng = Random(seed: seed + 100)
        let (receipts, renewals) = randomCorpus(&rng)
        let (whole, _) = try runHistory([(batch(receipts, renewals: renewals), 0)])
        let halves = [
            (batch(Array(receipts.prefix(receipts.count / 2)), renewals: renewals), 0),
            (batch(Array(receipts.dropFirst(receipts.count / 2))), 0),
        ]
        let (split, _) = try runHistory(halves, memoryBudget: 65_536)
        #expect(whole.eventsCSV == split.eventsCSV)
        #expect(whole.dailyCSV == split.dailyCSV)
        #expect(whole.subscriptionsCSV == split.subscriptionsCSV)
        #expect(whole.events.count > 20)
    }

    // MARK: - Helpers

    func snapshotByProduct(_ daily: [[String: String]], on d: String) -> [String: [String: Int]] {
        var out: [String: [String: Int]] = [:]
        for r in daily where r["day"] == d {
            for s in Self.snapshot where r[s] != "0" {
                out[r["product_id"]!, default: [:]][s, default: 0] += Int(r[s]!)!
            }
        }
        return out
    }

    func summed(_ perProduct: [String: [String: Int]]) -> [String: Int] {
        var out: [String: Int] = [:]
        for counts in perProduct.values { for (s, n) in counts { out[s, default: 0] += n } }
        return out
    }

    func stateCounts(_ subscriptions: [[String: String]]) -> [String: Int] {
        var out: [String: Int] = [:]
        for s in subscriptions where Self.snapshot.contains(s["state"]!) { out[s["state"]!, default: 0] += 1 }
        return out
    }

    func dateText(_ ms: Int64) -> String { String(ts(ms).prefix(10)) }

    func dayStart(_ text: String) -> Int64 {
        let parts = text.split(separator: "-").map { Int($0)! }
        return CivilTime.daysFromCivil(year: Int64(parts[0]), month: parts[1], day: parts[2]) * 86_400_000
    }

    /// Subscriptions of random periods (renewals, gaps, upgrades at renewal instants, refunds, trials and intro
    /// offers, a missing purchase date now and then), receipts showing them at random times, renewal infos.
    func randomCorpus(_ rng: inout Random) -> ([Receipt], [Renewal]) {
        var receipts: [Receipt] = []
        var renewals: [Renewal] = []
        var line: Int64 = 1
        for s in 0..<12 {
            let original = "s\(s)"
            var entries: [Entry] = []
            var t = day(Int64(rng.next(40))) + Int64(rng.next(86_400_000))
            for i in 0..<(1 + rng.next(8)) {
                let product = ["monthly", "annual", "weekly"][rng.next(3)]
                let length = Int64(1 + rng.next(40)) * 86_400_000
                var e = Entry(
                    transactionID: "\(s)-\(i)", originalTransactionID: rng.next(10) == 0 ? nil : original,
                    product: product, purchase: rng.next(25) == 0 ? nil : t, expires: t + length,
                    trial: i == 0 && rng.next(2) == 0, intro: rng.next(4) == 0)
                if rng.next(6) == 0 {
                    e.cancellation = t + Int64(rng.next(Int(length / 1000))) * 1000
                    e.reason = rng.next(2) == 0 ? 1 : nil
                }
                entries.append(e)
                // Next: at the end (a renewal), at the same instant (an upgrade), or after a gap.
                switch rng.next(4) {
                case 0: t += 0
                case 1: t += length + Int64(rng.next(20)) * 86_400_000 + 1000
                default: t += length
                }
            }
            for _ in 0..<(1 + rng.next(3)) {
                let created = day(Int64(rng.next(300)))
                receipts.append(Receipt(line: line, created: created, entries: entries))
                line += 1
            }
            if rng.next(2) == 0 {
                var n = Renewal(line: line, originalTransactionID: original, signed: day(Int64(rng.next(300))))
                n.expirationIntent = rng.next(2) == 0 ? 1 : nil
                n.billingRetry = rng.next(3) == 0
                n.graceExpires = rng.next(2) == 0 ? n.signed! + Int64(rng.next(10)) * 86_400_000 : nil
                renewals.append(n)
                line += 1
            }
        }
        return (receipts, renewals)
    }
}

/// SplitMix64: a seeded, portable random sequence for the random corpora (and shuffles).
struct Random: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
