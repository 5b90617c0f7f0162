import Foundation
import ReceiptHistory
import ReceiptModel
import ReceiptSink
import Testing

/// The renewal-info rules of docs/history.md ("Renewal infos (JWS)") on small hand-made cases.
@Suite("History renewal-info rules")
struct RenewalRulesTests {
    /// A monthly period of subscription `original`, from day `start` to day `start + 30`.
    func period(_ id: String, _ original: String = "1", start: Int64, cancel: Int64? = nil) -> Entry {
        Entry(
            transactionID: id, originalTransactionID: original, purchase: day(start), expires: day(start + 30),
            cancellation: cancel.map(day), reason: cancel == nil ? nil : 0)
    }

    /// Two monthly periods of subscription "1": days 0-30 and 30-60, seen by a receipt made on day 40.
    var twoPeriods: Receipt {
        Receipt(line: 1, created: day(40), entries: [period("1", start: 0), period("2", start: 30)])
    }

    func rows(
        _ receipts: [Receipt], _ renewals: [Renewal], asOf: Int64? = nil, memoryBudget: Int? = nil
    ) throws -> [[String: String]] {
        try runHistory([(batch(receipts, renewals: renewals), 0)], asOf: asOf, memoryBudget: memoryBudget).0
            .subscriptions
    }

    func row(_ receipts: [Receipt], _ renewals: [Renewal], asOf: Int64? = nil) throws -> [String: String] {
        let all = try rows(receipts, renewals, asOf: asOf)
        #expect(all.count == 1)
        return try #require(all.first)
    }

    @Test("subscriptions has the renewal columns whatever the input held, null without a renewal info")
    func columnsAlways() throws {
        let renewalColumns =
            ",renewal_signed_date,auto_renew_status,auto_renew_product_id,expiration_intent,"
            + "is_in_billing_retry_period,grace_period_expires_date"
        let (plain, _) = try runHistory([(batch([twoPeriods]), 0)], asOf: day(65))
        let header = try #require(plain.subscriptionsCSV.split(separator: "\n").first)
        #expect(header.split(separator: ",").count == TableSchema.subscriptions.columns.count)
        #expect(header.hasSuffix(",state" + renewalColumns + ",user_id,multiple_user_ids,app_account_token"))
        let receiptsOnly = try #require(plain.subscriptions.first)
        #expect(receiptsOnly["renewal_signed_date"] == "")
        #expect(receiptsOnly["is_in_billing_retry_period"] == "")
        #expect(receiptsOnly["state"] == "unknown")

        // A rejected renewal info counts for nothing: the same table as the receipts alone give.
        let rejected = Renewal(line: 2, status: 21003, originalTransactionID: "1", signed: day(41))
        let (withJWS, _) = try runHistory([(batch([twoPeriods], renewals: [rejected]), 0)], asOf: day(65))
        #expect(withJWS.subscriptionsCSV == plain.subscriptionsCSV)
    }

    @Test("the columns come from the newest renewal info of the key")
    func columns() throws {
        let older = Renewal(
            line: 2, originalTransactionID: "1", signed: day(35), autoRenewStatus: 1, autoRenewProductID: "monthly")
        let newer = Renewal(
            line: 3, originalTransactionID: "1", signed: day(45), autoRenewStatus: 0, autoRenewProductID: "annual",
            expirationIntent: 1, billingRetry: false, graceExpires: day(50))
        // Input order does not matter: the newest by signed date wins, also on the earlier line.
        var newerFirst = newer
        newerFirst.line = 2
        var olderLast = older
        olderLast.line = 3
        for renewals in [[older, newer], [newerFirst, olderLast]] {
            let s = try row([twoPeriods], renewals)
            #expect(s["renewal_signed_date"] == ts(day(45)))
            #expect(s["auto_renew_status"] == "0")
            #expect(s["auto_renew_product_id"] == "annual")
            #expect(s["expiration_intent"] == "1")
            #expect(s["is_in_billing_retry_period"] == "false")
            #expect(s["grace_period_expires_date"] == ts(day(50)))
        }
    }

    @Test("each state a renewal info gives, and those it leaves alone")
    func states() throws {
        // After the last expiry (day 60) no receipt shows a renewal: the receipts alone say unknown.
        #expect(try row([twoPeriods], [], asOf: day(65))["state"] == "unknown")

        let retry = Renewal(line: 2, originalTransactionID: "1", signed: day(61), billingRetry: true)
        #expect(try row([twoPeriods], [retry], asOf: day(65))["state"] == "billing_retry")

        var grace = retry
        grace.graceExpires = day(76)
        #expect(try row([twoPeriods], [grace], asOf: day(65))["state"] == "grace_period")
        // Once the grace period is over, Apple is still retrying: billing retry.
        #expect(try row([twoPeriods], [grace], asOf: day(76))["state"] == "billing_retry")

        let lapsed = Renewal(
            line: 2, originalTransactionID: "1", signed: day(61), autoRenewStatus: 0, expirationIntent: 1)
        #expect(try row([twoPeriods], [lapsed], asOf: day(65))["state"] == "expired")
        // Signed before the last expiry, an expiration intent proves nothing about it.
        var early = lapsed
        early.signed = day(50)
        #expect(try row([twoPeriods], [early], asOf: day(65))["state"] == "unknown")
        // No expiration intent, not in billing retry: nothing proves the absence of a renewal.
        var renewing = lapsed
        renewing.expirationIntent = nil
        renewing.autoRenewStatus = 1
        #expect(try row([twoPeriods], [renewing], asOf: day(65))["state"] == "unknown")

        // Auto-renew off does not end a running period: active, with the 0 shown.
        let off = Renewal(line: 2, originalTransactionID: "1", signed: day(40), autoRenewStatus: 0)
        let active = try row([twoPeriods], [off], asOf: day(45))
        #expect(active["state"] == "active")
        #expect(active["auto_renew_status"] == "0")

        // A refund of the newest period wins over billing retry.
        let refunded = Receipt(
            line: 1, created: day(62), entries: [period("1", start: 0), period("2", start: 30, cancel: 40)])
        #expect(try row([refunded], [retry], asOf: day(65))["state"] == "revoked")

        // Before the first period, nothing applies.
        #expect(try row([twoPeriods], [retry], asOf: day(-1))["state"] == "not_started")
    }

    @Test("a receipt made after the last expiry still says expired when the renewal info says nothing more")
    func expiredByReceipt() throws {
        let later = Receipt(line: 3, created: day(70), entries: twoPeriods.entries)
        let plain = Renewal(line: 2, originalTransactionID: "1", signed: day(61))
        #expect(try row([twoPeriods, later], [plain], asOf: day(65))["state"] == "expired")
        // In billing retry, the receipt's silence is the retry: billing_retry wins over expired.
        var retry = plain
        retry.billingRetry = true
        #expect(try row([twoPeriods, later], [retry], asOf: day(65))["state"] == "billing_retry")
    }

    @Test("a renewal info older than the newest period, or signed after A, does not change the state")
    func olderOrLater() throws {
        // Billing retry on day 29 was followed by the renewal of day 30: the newest period is what counts.
        let stale = Renewal(line: 2, originalTransactionID: "1", signed: day(29), billingRetry: true)
        let s = try row([twoPeriods], [stale], asOf: day(65))
        #expect(s["state"] == "unknown")
        #expect(s["is_in_billing_retry_period"] == "true")
        // Signed after A: not known at A, though its columns show it (as-of changes only state).
        let future = Renewal(line: 2, originalTransactionID: "1", signed: day(70), billingRetry: true)
        let f = try row([twoPeriods], [future], asOf: day(65))
        #expect(f["state"] == "unknown")
        #expect(f["renewal_signed_date"] == ts(day(70)))
        #expect(try row([twoPeriods], [future], asOf: day(70))["state"] == "billing_retry")
    }

    @Test("ties on the signed date go to the later input, then line, then jws_index")
    func ties() throws {
        let a = Renewal(line: 2, originalTransactionID: "1", signed: day(61), billingRetry: true)
        var b = a
        b.line = 3
        b.billingRetry = false
        b.expirationIntent = 2
        // Later line wins, whatever the order the rows come in.
        #expect(try row([twoPeriods], [a, b], asOf: day(65))["state"] == "expired")
        var c = a
        c.line = 3
        c.jwsIndex = 1
        #expect(try row([twoPeriods], [b, c], asOf: day(65))["state"] == "billing_retry")
        // Later input wins over an earlier line.
        let first = batch([twoPeriods], renewals: [b])
        let second = batch([], renewals: [a], source: "second.ndjson")
        for order in [[(first, 0), (second, 1)], [(second, 1), (first, 0)]] {
            let (t, _) = try runHistory(order, inputs: ["in.ndjson", "second.ndjson"], asOf: day(65))
            #expect(t.subscriptions.first?["state"] == "billing_retry")
        }
    }

    @Test("renewal infos that do not count or match nothing change nothing")
    func notCounting() throws {
        let base = Renewal(line: 2, originalTransactionID: "1", signed: day(61), billingRetry: true)
        var xcode = base
        xcode.environment = "Xcode"
        var local = base
        local.environment = "LocalTesting"
        var noOriginal = base
        noOriginal.originalTransactionID = nil
        var rejected = base
        rejected.status = 21003
        var other = base
        other.originalTransactionID = "999"
        for n in [xcode, local, noOriginal, rejected, other] {
            let all = try rows([twoPeriods], [n], asOf: day(65))
            #expect(all.count == 1)
            #expect(all.first?["state"] == "unknown")
            #expect(all.first?["renewal_signed_date"] == "")
        }
    }

    @Test("Sandbox and Production renewal infos refine only their environment's row")
    func environments() throws {
        let sandbox = Receipt(
            line: 3, created: day(40), type: "ProductionSandbox",
            entries: [period("1", start: 0), period("2", start: 30)])
        let retry = Renewal(
            line: 4, environment: "Sandbox", originalTransactionID: "1", signed: day(61), billingRetry: true)
        let all = try rows([twoPeriods, sandbox], [retry], asOf: day(65))
        #expect(all.map { $0["environment"] } == ["Production", "Sandbox"])
        #expect(all.map { $0["state"] } == ["unknown", "billing_retry"])
        #expect(all.map { $0["renewal_signed_date"] } == ["", ts(day(61))])
        // A renewal info without an environment is a Production one.
        var bare = retry
        bare.environment = nil
        #expect(
            try rows([twoPeriods, sandbox], [bare], asOf: day(65)).map { $0["state"] } == ["billing_retry", "unknown"])
    }

    @Test("a renewal info names no bundle: it refines every row of its environment and original transaction id")
    func acrossBundles() throws {
        var other = twoPeriods
        other.line = 2
        other.bundle = "com.example.other"
        let retry = Renewal(line: 3, originalTransactionID: "1", signed: day(61), billingRetry: true)
        let all = try rows([twoPeriods, other], [retry], asOf: day(65))
        #expect(all.map { $0["bundle_id"] } == ["com.example.app", "com.example.other"])
        #expect(all.map { $0["state"] } == ["billing_retry", "billing_retry"])
    }

    /// Many subscriptions and renewal infos, for the spill and the parts.
    func many() -> ([Receipt], [Renewal]) {
        var receipts: [Receipt] = []
        var renewals: [Renewal] = []
        for k in 0..<400 {
            let id = "s\(k)"
            receipts.append(
                Receipt(line: Int64(2 * k + 1), created: day(40), entries: [period(id + "a", id, start: 0)]))
            renewals.append(
                Renewal(
                    line: Int64(2 * k + 2), originalTransactionID: id, signed: day(31 + Int64(k % 7)),
                    autoRenewProductID: "product-\(k)", billingRetry: k % 3 == 0,
                    graceExpires: k % 2 == 0 ? day(45) : nil))
        }
        return (receipts, renewals)
    }

    @Test("the spill and the batch boundaries change nothing")
    func spill() throws {
        let (receipts, renewals) = many()
        let (whole, _) = try runHistory([(batch(receipts, renewals: renewals), 0)])
        // Each renewal info also in its own batch, repeated with an older copy first.
        var batches: [(ColumnBatch, Int)] = []
        for k in 0..<receipts.count {
            var old = renewals[k]
            old.signed = day(1)
            old.jwsIndex = 1
            old.billingRetry = !(old.billingRetry ?? false)
            batches.append((batch([receipts[k]], renewals: [old, renewals[k]]), 0))
        }
        let older = renewals.map { r -> Renewal in
            var r = r
            r.signed = day(1)
            r.line += 10_000
            return r
        }
        batches.append((batch([], renewals: older), 0))
        let (split, _) = try runHistory(batches.reversed(), memoryBudget: 1)
        #expect(split.result.spilledBytes > 0)
        #expect(whole.result.spilledBytes == 0)
        #expect(split.subscriptionsCSV == whole.subscriptionsCSV)
        let states = Dictionary(grouping: whole.subscriptions, by: { $0["state"]! }).mapValues(\.count)
        #expect(states["grace_period"] ?? 0 > 0)
        #expect(states["billing_retry"] ?? 0 > 0)
        #expect(states["expired"] ?? 0 > 0)
    }

    @Test("renewal infos sealed with the parts and taken in by a resumed run give the same tables")
    func parts() throws {
        let (receipts, renewals) = many()
        let (whole, _) = try runHistory([(batch(receipts, renewals: renewals), 0)])
        let dir = temporaryDirectory("parts")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let half = receipts.count / 2
        let first = HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: true, memoryBudget: 1)
        try first.add(batch(Array(receipts[..<half]), renewals: Array(renewals[..<half])), input: 0)
        let sealed = try first.sealPart(0)
        // The attempt stops here; a new process resumes from the committed part.
        let resumed = HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: true, memoryBudget: 1)
        resumed.removeUncommitted(keeping: [sealed])
        try resumed.adoptPart(sealed)
        try resumed.add(batch(Array(receipts[half...]), renewals: Array(renewals[half...])), input: 0)
        _ = try resumed.finish(asOf: nil, format: .csv, metadata: RunMetadata())
        resumed.removeSpill()
        let s = try String(contentsOfFile: dir + "/subscriptions.csv", encoding: .isoLatin1)
        #expect(s == whole.subscriptionsCSV)
    }

    @Test("a sealed part keeps its renewal infos and that its input held JWS through a resume")
    func partsMarker() throws {
        let retry = Renewal(line: 2, originalTransactionID: "1", signed: day(61), billingRetry: true)
        let dir = temporaryDirectory("marker")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: true)
        try first.add(batch([], renewals: [retry]), input: 0)
        let sealed = try first.sealPart(0)
        let resumed = HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: true)
        resumed.removeUncommitted(keeping: [sealed])
        try resumed.adoptPart(sealed)
        try resumed.add(batch([twoPeriods]), input: 0)
        _ = try resumed.finish(asOf: day(65), format: .csv, metadata: RunMetadata())
        resumed.removeSpill()
        let s = try String(contentsOfFile: dir + "/subscriptions.csv", encoding: .isoLatin1)
        let row = try #require(HistoryTables.rows(s).first)
        #expect(row["state"] == "billing_retry")
        #expect(row["renewal_signed_date"] == ts(day(61)))
    }
}
