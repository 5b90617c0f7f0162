import Foundation
import ReceiptModel
import Testing

@testable import ReceiptHistory

/// The compact form of purchase records: it reads back the values it was given, it merges occurrences as the
/// record table does, and the table turns compact past its threshold without changing what it gives back.
@Suite("History compact purchase table")
struct CompactPurchaseTests {
    /// A record's values as bytes (its spill encoding writes every value, byte strings by value).
    private func values(_ r: PurchaseRecord) -> [UInt8] {
        var w = SpillWriter()
        r.encode(into: &w)
        return w.bytes
    }

    private func key(_ r: PurchaseRecord) -> [UInt8] {
        r.text.withUnsafeBytes { t in
            [r.facts.environment.rawValue] + Array(t.span(r.facts.bundleID)) + [0]
                + Array(t.span(r.facts.transactionID))
        }
    }

    /// Every occurrence of `feeds`, the i-th feed's as input i.
    private func each(_ feeds: [HistoryFeed], _ body: (PurchaseOccurrence, Int, UnsafeRawBufferPointer) -> Void) {
        for (input, feed) in feeds.enumerated() {
            feed.text.withUnsafeBytes { t in
                for o in feed.purchases { body(o, input, UnsafeRawBufferPointer(rebasing: t[o.text])) }
            }
        }
    }

    /// Receipts whose entries cover the forms a fact takes: ids that are numbers, that look like numbers but are
    /// not written as one (a leading zero, 20 digits), that are not numbers, empty; dates absent, far in the past,
    /// at the extremes; cancellations, tokens, user ids; receipts without a creation date.
    private var varied: [Receipt] {
        [
            Receipt(
                line: 1, created: day(2),
                entries: [
                    Entry(
                        transactionID: "1000000123456789", originalTransactionID: "1000000123456789", purchase: day(1)),
                    Entry(transactionID: "0123", product: "com.example.yearly", purchase: nil, quantity: nil),
                    Entry(transactionID: "12345678901234567890", purchase: Int64.min, expires: Int64.max),
                    Entry(transactionID: "9999999999999999999", originalTransactionID: "0", purchase: -1),
                    Entry(
                        transactionID: "tx-ab\u{0}c", originalTransactionID: "", product: "", trial: nil, intro: true),
                    Entry(
                        transactionID: "7", purchase: day(1), expires: day(31), cancellation: day(5), reason: 1,
                        token: "3f6c0a36-54e2-4d6e-9f0c-6a0a0b3c7d11"),
                ], user: "user-1", userField: true),
            Receipt(line: 2, created: nil, bundle: "com.example.other", entries: [Entry(transactionID: "7")]),
            Receipt(line: 3, created: Int64.min + 1, type: "Sandbox", entries: [Entry(transactionID: "7")]),
        ]
    }

    @Test("a record's compact form reads back every value it was given")
    func roundTrips() {
        var records: [PurchaseRecord] = []
        each([batch(varied).history]) { o, input, text in records.append(PurchaseRecord(o, input: input, text: text)) }
        // Merged records too: counts, seen dates, and recencies apart from the newest.
        each([batch(varied).history, batch(varied).history]) { o, input, text in
            if input == 1,
                let i = records.firstIndex(where: { key($0) == key(PurchaseRecord(o, input: 0, text: text)) })
            {
                records[i].merge(o, input: input + 40_000_000_000, text: text)
            }
        }
        var store = CompactPurchaseStore(budget: 1 << 20)
        for r in records { store.insert(r) }
        #expect(store.count == records.count)
        for (i, r) in records.enumerated() { #expect(values(store.record(i)) == values(r)) }
        #expect(records.contains { $0.occurrences == 2 && $0.cancelledAt != nil && $0.tokenAt != nil })
    }

    @Test("the first facts alone, read back from the compact form, give a record's order key")
    func orderKeyFromTheFirstFacts() {
        var records: [PurchaseRecord] = []
        each([batch(varied).history]) { o, input, text in records.append(PurchaseRecord(o, input: input, text: text)) }
        #expect(CompactPurchase.orderFields < FactCounter.facts)
        var dictionary = TextDictionary()
        for r in records {
            var w = SpillWriter()
            _ = r.text.withUnsafeBytes { t in
                CompactPurchase.encodeFacts(r.facts, text: t, into: &w, dictionary: &dictionary)
            }
            var full: [UInt8] = []
            _ = r.text.withUnsafeBytes { t in PurchaseRecord.appendOrderKey(r.facts, text: t, to: &full) }
            var text: [UInt8] = []
            let facts = w.bytes.withUnsafeBytes { b in
                var reader = SpillReader(b)
                return CompactPurchase.decodeFacts(
                    &reader, dictionary: dictionary, text: &text, fields: CompactPurchase.orderFields)
            }
            guard let facts else {
                Issue.record("the first facts do not read back")
                continue
            }
            var partial: [UInt8] = []
            _ = text.withUnsafeBytes { t in PurchaseRecord.appendOrderKey(facts, text: t, to: &partial) }
            #expect(partial == full)
            // The facts after the order's are left unread.
            #expect(facts.expiresDate == nil && facts.userID == nil)
        }
        #expect(records.contains { $0.facts.expiresDate != nil })
    }

    @Test("numbers are packed only when writing the value back gives the same bytes")
    func numbers() {
        func number(_ s: String) -> UInt64? { Array(s.utf8).withUnsafeBytes { CompactPurchase.number($0) } }
        #expect(number("0") == 0)
        #expect(number("1000000123456789") == 1_000_000_123_456_789)
        #expect(number("9999999999999999999") == 9_999_999_999_999_999_999)
        for s in ["", "01", "00", "12345678901234567890", "1a", "-1", "+1", " 1", "1.0"] { #expect(number(s) == nil) }
        for v: UInt64 in [0, 7, 10, 99, 1_000_000_000_000, 9_999_999_999_999_999_999, .max] {
            var out: [UInt8] = [42]
            CompactPurchase.appendDigits(v, to: &out)
            #expect(out == [42] + Array(String(v).utf8))
        }
    }

    /// A history whose occurrences repeat, change, come out of order and lack dates: the same purchases over
    /// several inputs.
    private var history: [HistoryFeed] {
        let ids = (0..<300).map { String(2_000_000 + $0) } + ["0042", "x-1"]
        return (0..<6).map { k in
            let k64 = Int64(k)
            // Input 4 is older than every other one; input 5 has no creation dates.
            let created: Int64? = k == 5 ? nil : day(k == 4 ? 1 : 10 + k64)
            let receipts = stride(from: 0, to: ids.count, by: 7).map { start in
                Receipt(
                    line: Int64(start + 1), created: created,
                    entries: ids[start..<min(start + 7, ids.count)].enumerated().map { j, id in
                        var e = Entry(transactionID: id, originalTransactionID: ids[start], purchase: day(1))
                        if (start + j) % 5 == k % 5 { e.product = "com.example.p\(k)" }
                        if (start + j) % 11 == k { e.cancellation = day(20 + k64) }
                        if (start + j) % 13 == k { e.reason = 1 }
                        if (start + j) % 3 == k % 3 { e.token = "token-\(k % 2)" }
                        if k == 2 { e.expires = day(40) }
                        return e
                    }, user: k % 2 == 0 ? "user-\(k)" : nil, userField: true)
            }
            return batch(receipts).history
        }
    }

    @Test("the compact store merges occurrences into the same values as the record table")
    func mergesAsRecords() throws {
        var records = PurchaseRecordTable(budget: 64 << 20)
        var store = CompactPurchaseStore(budget: 64 << 20)
        each(history) { o, input, text in
            records.add(o, input: input, text: text)
            store.add(o, input: input, text: text)
        }
        #expect(store.count == records.count && store.count == 302)
        #expect(store.dead > 0)
        var compact: [PurchaseRecord] = []
        try store.drain(chunk: 50) { chunk throws(HistoryError) in
            #expect(chunk.count <= 50)
            compact += chunk
        }
        #expect(store.isEmpty && store.bytes < 64 << 10)
        let expected = records.drain().sorted { key($0).lexicographicallyPrecedes(key($1)) }
        compact.sort { key($0).lexicographicallyPrecedes(key($1)) }
        #expect(compact.map(values) == expected.map(values))
        #expect(expected.contains { $0.occurrences == 6 && $0.cancelledAt != nil && $0.userAt != nil })
    }

    @Test(
        "the table turns compact past three quarters of its budget, in a fraction of the memory, and gives the same records"
    )
    func turnsCompact() throws {
        var receipts: [Receipt] = []
        for start in stride(from: 0, to: 40_000, by: 8) {
            let original = String(5_000_000 + start)
            let entries = (start..<(start + 8)).map { (i: Int) -> Entry in
                Entry(transactionID: String(5_000_000 + i), originalTransactionID: original)
            }
            receipts.append(Receipt(line: Int64(start + 1), created: day(3), entries: entries))
        }
        let feed = batch(receipts).history
        var records = PurchaseRecordTable(budget: 64 << 20)
        var table = PurchaseTable(budget: 12 << 20)
        var peak = 0
        each([feed, feed]) { o, input, text in
            records.add(o, input: input, text: text)
            table.add(o, input: input, text: text)
            peak = max(peak, table.bytes)
        }
        let (compact, count, bytes, inOrder) = (table.isCompact, table.count, table.bytes, table.drainsInOrder)
        #expect(compact && count == 40_000)
        #expect(peak <= 12 << 20)
        #expect(bytes * 2 < records.bytes)
        #expect(inOrder)
        var ordered: [PurchaseRecord] = []
        try table.drainInOrder { r throws(HistoryError) in ordered.append(r) }
        let empty = table.isEmpty
        #expect(empty)
        let expected = records.drain()
        let order = PurchaseRecord.rowOrder(expected).map { expected[Int($0)] }
        #expect(ordered.map(values) == order.map(values))
        #expect(ordered.allSatisfy { $0.occurrences == 2 })
    }

    @Test("a spill to make room takes the records added to least recently and keeps the others")
    func drainsTheColdest() throws {
        func feed(_ first: Int) -> HistoryFeed {
            var receipts: [Receipt] = []
            for start in stride(from: first, to: first + 800, by: 8) {
                let entries = (start..<(start + 8)).map { (i: Int) -> Entry in
                    Entry(transactionID: String(9_000_000 + i))
                }
                receipts.append(Receipt(line: Int64(start + 1), created: day(3), entries: entries))
            }
            return batch(receipts).history
        }
        // Purchases 0..<800 are added to once, first; 800..<1600 three times, the last two after all of the first.
        let (cold, hot) = (feed(0), feed(800))
        var records = PurchaseRecordTable(budget: 64 << 20)
        var store = CompactPurchaseStore(budget: 64 << 20)
        each([cold, hot, hot]) { o, input, text in
            records.add(o, input: input, text: text)
            store.add(o, input: input, text: text)
        }
        let before = store.bytes
        var spilled: [PurchaseRecord] = []
        try store.drainColdest(chunk: 64) { chunk throws(HistoryError) in spilled += chunk }
        let coldKeys = Set(cold.purchases.map(\.keyHash))
        #expect(spilled.count >= 1_600 / CompactPurchaseStore.coldShare && spilled.count < 800)
        #expect(spilled.allSatisfy { r in r.occurrences == 1 })
        #expect(store.count == 1_600 - spilled.count && store.bytes < before && store.dead == 0)
        // The kept records are found again by key after the move: adding to them adds no record.
        each([cold, hot, hot, hot]) { o, input, text in
            if input == 3 {
                records.add(o, input: input, text: text)
                store.add(o, input: input, text: text)
            }
        }
        #expect(store.count == 1_600 - spilled.count)
        var rest: [PurchaseRecord] = []
        try store.drain(chunk: 1_000) { chunk throws(HistoryError) in rest += chunk }
        let all = (spilled + rest).sorted { key($0).lexicographicallyPrecedes(key($1)) }
        let expected = records.drain().sorted { key($0).lexicographicallyPrecedes(key($1)) }
        #expect(all.map(values) == expected.map(values))
        func keyHash(_ r: PurchaseRecord) -> UInt64 {
            r.text.withUnsafeBytes { t in
                PurchaseOccurrence.keyHash(
                    environment: r.facts.environment.rawValue, bundleID: t.span(r.facts.bundleID),
                    transactionID: t.span(r.facts.transactionID))
            }
        }
        #expect(Set(spilled.map(keyHash)).isSubset(of: coldKeys))
        #expect(Set(hot.purchases.map(\.keyHash)).isSubset(of: Set(rest.map(keyHash))))
    }

    @Test(
        "the history's tables are the same whether its purchases stay records, turn compact, or turn compact and spill")
    func tablesDoNotDependOnTheForm() throws {
        // 3,000 accounts, each with monthly renewals, sending a receipt with its whole history every month for a
        // year: 36,000 purchases, each seen up to 12 times.
        var batches: [(ColumnBatch, Int)] = []
        for month in 0..<12 {
            var receipts: [Receipt] = []
            for account in 0..<3_000 {
                let original = String(70_000_000 + account * 100)
                let entries = (0...month).map { (m: Int) -> Entry in
                    let start = day(Int64(m * 30))
                    return Entry(
                        transactionID: String(70_000_000 + account * 100 + m), originalTransactionID: original,
                        product: account % 3 == 0 ? "com.example.yearly" : "com.example.monthly", purchase: start,
                        expires: start + 30 * 86_400_000, cancellation: account % 97 == m ? start + 86_400_000 : nil,
                        reason: account % 97 == m ? 1 : nil)
                }
                receipts.append(
                    Receipt(line: Int64(account + 1), created: day(Int64(month * 30 + 1)), entries: entries))
            }
            batches.append((batch(receipts), month))
        }
        let inputs = (0..<12).map { "month-\($0).ndjson" }
        let asOf = day(400)
        let (records, _) = try runHistory(batches, inputs: inputs, asOf: asOf, memoryBudget: 1 << 30)
        let (compact, _) = try runHistory(batches, inputs: inputs, asOf: asOf, memoryBudget: 12 << 20)
        let (spilled, _) = try runHistory(batches, inputs: inputs, asOf: asOf, memoryBudget: 1 << 20, threads: 2)
        let (partly, _) = try runHistory(batches, inputs: inputs, asOf: asOf, memoryBudget: 3 << 20)
        #expect(records.result.purchases == 36_000 && records.result.spilledBytes == 0)
        #expect(compact.result.spilledBytes == 0)
        #expect(spilled.result.spilledPurchaseRecords > 36_000)
        #expect(partly.result.spilledPurchaseRecords > 0)
        for run in [compact, spilled, partly] {
            #expect(run.purchasesCSV == records.purchasesCSV)
            #expect(run.subscriptionsCSV == records.subscriptionsCSV)
            #expect(run.eventsCSV == records.eventsCSV)
            #expect(run.dailyCSV == records.dailyCSV)
        }
    }
}

/// Counts the facts `PurchaseFacts.visit` gives.
private struct FactCounter: PurchaseFactVisitor {
    var count = 0
    static var facts: Int {
        var v = FactCounter()
        var f = PurchaseFacts()
        f.visit(&v)
        return v.count
    }
    mutating func text(_ name: StaticString, _ v: inout TextSpan) { count += 1 }
    mutating func text(_ name: StaticString, _ v: inout TextSpan?) { count += 1 }
    mutating func int32(_ name: StaticString, _ v: inout Int32?) { count += 1 }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { count += 1 }
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { count += 1 }
    mutating func bool(_ name: StaticString, _ v: inout Bool?) { count += 1 }
}
