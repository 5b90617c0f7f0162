import Foundation
import ReceiptModel
import Testing

@testable import ReceiptHistory

/// The in-memory purchase table: merging by key, its memory count, and the compact record's
/// stored forms (the overlay kept apart, dates without optionals).
@Suite("History purchase record table")
struct PurchaseRecordTableTests {
    /// Adds every occurrence of `feed` to `table`.
    private func add(_ feed: HistoryFeed, to table: inout PurchaseRecordTable, input: Int = 0) {
        feed.text.withUnsafeBytes { t in
            for o in feed.purchases { table.add(o, input: input, text: UnsafeRawBufferPointer(rebasing: t[o.text])) }
        }
    }

    /// Receipts of `count` distinct purchases, `perReceipt` entries each, one receipt per line.
    private func receipts(_ count: Int, perReceipt: Int = 10, createdDay: Int64 = 2) -> [Receipt] {
        stride(from: 0, to: count, by: perReceipt).map { start in
            Receipt(
                line: Int64(start / perReceipt + 1), created: day(createdDay),
                entries: (start..<min(start + perReceipt, count)).map {
                    Entry(transactionID: String(1_000_000 + $0), purchase: day(1))
                })
        }
    }

    @Test("thousands of purchases are each held once, and a second pass over them merges into the same records")
    func mergesByKey() {
        var table = PurchaseRecordTable(budget: 64 << 20)
        let n = 9_000
        add(batch(receipts(n)).history, to: &table)
        #expect(table.count == n)
        add(batch(receipts(n, createdDay: 3)).history, to: &table, input: 1)
        #expect(table.count == n)
        let records = Array(table.records)
        #expect(records.allSatisfy { $0.occurrences == 2 && $0.firstSeen == day(2) && $0.lastSeen == day(3) })
        #expect(records.allSatisfy { $0.newest.input == 1 })
        let ids = Set(records.map { r in r.text.withUnsafeBytes { Array($0.span(r.facts.transactionID)) } })
        #expect(ids.count == n)
    }

    @Test(
        "the table counts its records' values, what they allocated and its slots, and a spill's empty table only its slots"
    )
    func countsItsMemory() {
        var table = PurchaseRecordTable(budget: 64 << 20)
        let empty = table.bytes
        add(batch(receipts(5_000)).history, to: &table)
        let held = table.records.reduce(0) { $0 + MemoryLayout<PurchaseRecord>.stride + $1.heapBytes }
        #expect(table.bytes > held)
        #expect(table.bytes - held < 5_000 * 4 * 16)
        table.removeAll()
        #expect(table.isEmpty)
        #expect(table.bytes >= empty)
        #expect(table.bytes < held / 4)
        add(batch(receipts(100)).history, to: &table)
        #expect(table.count == 100)
    }

    @Test("draining takes every record out in the order added and leaves an empty table")
    func drains() {
        var table = PurchaseRecordTable(budget: 64 << 20)
        add(batch(receipts(4_200)).history, to: &table)
        let before = Array(table.records).map(\.newest.line)
        let all = table.drain()
        #expect(all.map(\.newest.line) == before)
        #expect(table.isEmpty && table.records.isEmpty)
    }

    @Test("a copy of a record keeps its overlay when the original's changes, and an undated record has no seen dates")
    func overlayIsAValue() {
        let f = batch([
            Receipt(line: 1, created: nil, entries: [Entry(transactionID: "7", cancellation: day(3), reason: 1)])
        ]).history
        var a = f.text.withUnsafeBytes { t in
            PurchaseRecord(f.purchases[0], input: 0, text: UnsafeRawBufferPointer(rebasing: t[f.purchases[0].text]))
        }
        #expect(a.firstSeen == nil && a.lastSeen == nil)
        #expect(a.cancelledAt != nil && a.userAt == nil)
        let original = a.cancelledAt
        let b = a
        a.cancelledAt = Recency(created: 9, input: 9, line: 9, entry: 9)
        a.userAt = Recency(created: 1, input: 1, line: 1, entry: 1)
        #expect(b.cancelledAt == original && a.cancelledAt != original)
        #expect(b.userAt == nil)
        a.cancelledAt = nil
        a.userAt = nil
        #expect(a.heapBytes < b.heapBytes)
        a.firstSeen = Int64.max
        a.lastSeen = Int64.max
        #expect(a.firstSeen == Int64.max && a.lastSeen == Int64.max)
    }
}
