import Foundation
import ReceiptHistory
import ReceiptModel
import Testing

/// The `purchases` rules of docs/history.md on small hand-made cases.
@Suite("History purchases rules")
struct PurchaseRulesTests {
    @Test("the newest occurrence gives the facts; first/last seen, occurrences, source and line follow it")
    func newestWins() throws {
        let old = Receipt(
            line: 2, created: day(10),
            entries: [Entry(transactionID: "1", originalTransactionID: "1", product: "old", purchase: day(1))])
        let new = Receipt(
            line: 1, created: day(20),
            entries: [Entry(transactionID: "1", originalTransactionID: "1", product: "new", purchase: day(1))])
        // The newer receipt is earlier in the input: recency is by creation date before position.
        let (t, _) = try runHistory([(batch([new, old]), 0)])
        let rows = t.purchases
        #expect(rows.count == 1)
        #expect(rows[0]["product_id"] == "new")
        #expect(rows[0]["first_seen"] == ts(day(10)))
        #expect(rows[0]["last_seen"] == ts(day(20)))
        #expect(rows[0]["occurrences"] == "2")
        #expect(rows[0]["line"] == "1")
        #expect(rows[0]["source"] == "in.ndjson")
    }

    @Test("equal creation dates: the later line wins, then the later input, then the later entry")
    func tiesOnCreated() throws {
        let a = Receipt(line: 5, created: day(3), entries: [Entry(transactionID: "9", product: "line5")])
        let b = Receipt(line: 7, created: day(3), entries: [Entry(transactionID: "9", product: "line7")])
        let (byLine, _) = try runHistory([(batch([b, a]), 0)])
        #expect(byLine.purchases.map { $0["product_id"] } == ["line7"])

        // Input 1 line 2 is later than input 0 line 7.
        let c = Receipt(line: 2, created: day(3), entries: [Entry(transactionID: "9", product: "input1")])
        let (byInput, _) = try runHistory(
            [(batch([c], source: "b.ndjson"), 1), (batch([b]), 0)], inputs: ["in.ndjson", "b.ndjson"])
        #expect(byInput.purchases.map { $0["product_id"] } == ["input1"])
        #expect(byInput.purchases.map { $0["source"] } == ["b.ndjson"])

        let twice = Receipt(
            line: 1, created: day(3),
            entries: [Entry(transactionID: "9", product: "first"), Entry(transactionID: "9", product: "second")])
        let (byEntry, _) = try runHistory([(batch([twice]), 0)])
        #expect(byEntry.purchases.map { $0["product_id"] } == ["second"])
        #expect(byEntry.purchases.map { $0["occurrences"] } == ["2"])
    }

    @Test("a refund seen late stays known when a later receipt omits it")
    func refundSeenLate() throws {
        let before = Receipt(line: 1, created: day(10), entries: [Entry(transactionID: "1", purchase: day(1))])
        let refunded = Receipt(
            line: 2, created: day(20),
            entries: [Entry(transactionID: "1", purchase: day(1), cancellation: day(15), reason: 1)])
        let omitted = Receipt(
            line: 3, created: day(30),
            entries: [Entry(transactionID: "1", product: "latest", purchase: day(1))])
        let (t, _) = try runHistory([(batch([before, refunded, omitted]), 0)])
        let row = try #require(t.purchases.first)
        #expect(row["cancellation_date"] == ts(day(15)))
        #expect(row["cancellation_reason"] == "1")
        #expect(row["product_id"] == "latest")
        #expect(row["line"] == "3")

        let (none, _) = try runHistory([(batch([before, omitted]), 0)])
        #expect(none.purchases.first?["cancellation_date"] == "")
        #expect(none.purchases.first?["cancellation_reason"] == "")
    }

    @Test("invalid, Xcode and LocalTesting records do not contribute; a receipt sent twice counts twice")
    func exclusions() throws {
        let valid = Receipt(line: 1, created: day(1), entries: [Entry(transactionID: "1")])
        let invalid = Receipt(line: 2, created: day(9), status: 21002, entries: [Entry(transactionID: "1")])
        let xcode = Receipt(line: 3, created: day(9), type: "Xcode", entries: [Entry(transactionID: "0")])
        let again = Receipt(line: 4, created: day(1), entries: [Entry(transactionID: "1")])
        let local = Receipt(line: 5, created: day(9), type: "LocalTesting", entries: [Entry(transactionID: "1")])
        let (t, _) = try runHistory([(batch([valid, invalid, xcode, again, local]), 0)])
        #expect(t.purchases.count == 1)
        #expect(t.purchases[0]["occurrences"] == "2")
        #expect(t.purchases[0]["last_seen"] == ts(day(1)))
        #expect(t.purchases[0]["line"] == "4")
        // The invalid and StoreKit testing records are not the horizon either.
        #expect(t.result.asOf == day(1))
    }

    @Test("the same transaction id in sandbox and production is two purchases; rows in the contract's order")
    func environmentsAndOrder() throws {
        let prod = Receipt(
            line: 1, created: day(5),
            entries: [
                Entry(transactionID: "7", originalTransactionID: "7", purchase: day(2)),
                Entry(transactionID: "3", originalTransactionID: nil, purchase: day(4)),
                Entry(transactionID: "2", originalTransactionID: nil, purchase: day(4)),
                Entry(transactionID: "6", originalTransactionID: "1", purchase: day(3)),
            ])
        let sandbox = Receipt(
            line: 2, created: day(5), type: "ProductionSandbox",
            entries: [Entry(transactionID: "7", originalTransactionID: "7", purchase: day(2))])
        let other = Receipt(line: 3, created: day(5), bundle: "com.example.aaa", entries: [Entry(transactionID: "7")])
        // A record naming no environment counts as Production.
        let untyped = Receipt(line: 4, created: day(5), type: nil, entries: [Entry(transactionID: "8")])
        let (t, _) = try runHistory([(batch([sandbox, prod, other, untyped]), 0)])
        let keys = t.purchases.map { "\($0["environment"]!)/\($0["bundle_id"]!)/\($0["transaction_id"]!)" }
        #expect(
            keys == [
                "Production/com.example.aaa/7",
                // null original_transaction_id first, then by purchase_date and transaction_id
                "Production/com.example.app/8", "Production/com.example.app/2", "Production/com.example.app/3",
                "Production/com.example.app/6", "Production/com.example.app/7",
                "Sandbox/com.example.app/7",
            ])
    }

    @Test("rows do not depend on batch boundaries, batch order or the spill budget")
    func orderIndependent() throws {
        var receipts: [Receipt] = []
        for i in 0..<400 {
            let entries = (0...(i % 5)).map { k in
                Entry(
                    transactionID: String(1000 + (i * 7 + k) % 300), originalTransactionID: String((i + k) % 40),
                    product: "p\(i % 3)", purchase: day(Int64(k)), expires: day(Int64(k) + 30),
                    cancellation: i % 50 == 0 ? day(Int64(k) + 2) : nil, reason: i % 50 == 0 ? 0 : nil)
            }
            receipts.append(Receipt(line: Int64(i + 1), created: day(Int64(i % 90)), entries: entries))
        }
        let (whole, _) = try runHistory([(batch(receipts), 0)])
        var shuffled: [(ColumnBatch, Int)] = []
        var rng = SystemRandomNumberGenerator()
        let order = receipts.shuffled(using: &rng)
        var start = 0
        while start < order.count {
            let n = Int.random(in: 1...37, using: &rng)
            shuffled.append((batch(Array(order[start..<min(order.count, start + n)])), 0))
            start += n
        }
        let (split, _) = try runHistory(shuffled, memoryBudget: 1)
        #expect(split.result.spilledBytes > 0)
        #expect(whole.result.spilledBytes == 0)
        #expect(whole.purchasesCSV == split.purchasesCSV)
        #expect(whole.subscriptionsCSV == split.subscriptionsCSV)
        #expect(whole.purchases.count == 300)
    }

    @Test("the spill is removed at the end and the tables and the history state are the only files written")
    func spillRemoved() throws {
        let r = Receipt(line: 1, created: day(1), entries: (0..<2000).map { Entry(transactionID: String($0)) })
        let (t, dir) = try runHistory([(batch([r]), 0)], memoryBudget: 1)
        #expect(t.result.spilledBytes > 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(
            names == [".receiptflow-state", "daily.csv", "events.csv", "purchases.csv", "subscriptions.csv"])
    }

    @Test("--as-of parses RFC 3339 times and dates, and rejects malformed ones")
    func asOfParsing() {
        #expect(AsOfDate.parse("2024-01-11") == day(10))
        #expect(AsOfDate.parse("2024-01-11T00:00:00Z") == day(10))
        #expect(AsOfDate.parse("2024-01-11T02:30:00.250+02:30") == day(10) + 250)
        #expect(AsOfDate.parse("2024-01-10T23:00:00-01:00") == day(10))
        for bad in ["2024-13-01", "2024-02-30", "2024-01-11T00:00:00", "yesterday", "2024-01-11T25:00:00Z", ""] {
            #expect(AsOfDate.parse(bad) == nil, "\(bad)")
        }
    }
}
