import Foundation
import ReceiptModel
import Testing

@testable import ReceiptHistory

/// The merge of a repeated occurrence (`PurchaseRecord.mergeRepeat`) against the full merge.
@Suite("History repeated occurrences")
struct PurchaseRecordRepeatTests {
    /// The record of the first receipt's first entry merged with the second's, by the merge of an occurrence
    /// (which tries the repeat first) and by the full merge of a record; both encoded, and whether the repeat
    /// applied.
    private func merged(_ first: Receipt, _ second: Receipt) -> (repeatPath: [UInt8], full: [UInt8], repeated: Bool) {
        let a = batch([first]).history
        let b = batch([second]).history
        let x = a.purchases[0]
        let y = b.purchases[0]
        func record(_ feed: HistoryFeed, _ o: PurchaseOccurrence) -> PurchaseRecord {
            feed.text.withUnsafeBytes {
                PurchaseRecord(o, input: 0, text: UnsafeRawBufferPointer(rebasing: $0[o.text]))
            }
        }
        var byOccurrence = record(a, x)
        var probe = byOccurrence
        let repeated = b.text.withUnsafeBytes { t in
            probe.mergeRepeat(
                y, recency: PurchaseRecord.recency(y, input: 0), text: UnsafeRawBufferPointer(rebasing: t[y.text]))
        }
        b.text.withUnsafeBytes { byOccurrence.merge(y, input: 0, text: UnsafeRawBufferPointer(rebasing: $0[y.text])) }
        var full = record(a, x)
        full.merge(record(b, y))
        var w1 = SpillWriter()
        byOccurrence.encode(into: &w1)
        var w2 = SpillWriter()
        full.encode(into: &w2)
        return (w1.bytes, w2.bytes, repeated)
    }

    private func receipt(_ line: Int64, _ created: Int64, _ entry: Entry, user: String? = nil) -> Receipt {
        Receipt(line: line, created: created, entries: [entry], user: user, userField: user != nil)
    }

    @Test("a newer occurrence stating the same facts takes the repeat path and merges as the full merge does")
    func sameFactsRepeat() {
        let e = Entry(transactionID: "7", originalTransactionID: "7", purchase: day(1), expires: day(31))
        let r = merged(receipt(1, day(2), e), receipt(2, day(5), e))
        #expect(r.repeated)
        #expect(r.repeatPath == r.full)
    }

    @Test(
        "the same user id, token and cancellation repeat; a new one of any takes the full merge, with the same result")
    func overlays() {
        var e = Entry(transactionID: "7", purchase: day(1), token: "tok")
        let plain = Entry(transactionID: "7", purchase: day(1))
        var cancelled = e
        cancelled.cancellation = day(3)
        cancelled.reason = 1
        let cases: [(Receipt, Receipt, Bool)] = [
            (receipt(1, day(2), e, user: "u1"), receipt(2, day(5), e, user: "u1"), true),
            (receipt(1, day(2), e, user: "u1"), receipt(2, day(5), e, user: "u2"), false),
            // Without a token the user id ends the text, so the text without it is a prefix.
            (receipt(1, day(2), plain, user: "u1"), receipt(2, day(5), plain), true),
            (receipt(1, day(2), e, user: "u1"), receipt(2, day(5), e), false),
            (receipt(1, day(2), e), receipt(2, day(5), e, user: "u1"), false),
            (receipt(1, day(4), cancelled), receipt(2, day(5), cancelled), true),
            (receipt(1, day(2), e), receipt(2, day(5), cancelled), false),
            (receipt(1, day(4), cancelled), receipt(2, day(5), e), true),
        ]
        for (a, b, repeats) in cases {
            let r = merged(a, b)
            #expect(r.repeated == repeats)
            #expect(r.repeatPath == r.full)
        }
        e.token = "other"
        let r = merged(receipt(1, day(2), cancelled), receipt(2, day(5), e))
        #expect(!r.repeated)
        #expect(r.repeatPath == r.full)
    }

    @Test("an older occurrence, or one with other facts, is not a repeat")
    func notRepeats() {
        let e = Entry(transactionID: "7", product: "a", purchase: day(1))
        var other = e
        other.product = "b"
        let older = merged(receipt(2, day(5), e), receipt(1, day(2), e))
        #expect(!older.repeated)
        #expect(older.repeatPath == older.full)
        let changed = merged(receipt(1, day(2), e), receipt(2, day(5), other))
        #expect(!changed.repeated)
        #expect(changed.repeatPath == changed.full)
    }

    @Test("every fact visit lists, but the four merged on their own, is compared")
    func comparesEveryFact() {
        var base = PurchaseFacts()
        var fill = Filler()
        base.visit(&fill)
        let overlay: Set<String> = [
            "cancellation_date", "cancellation_reason", "user_id", "multiple_user_ids",
            "app_account_token",
        ]
        #expect(base.sameBeforeOverlay(base))
        var count = Counter()
        base.visit(&count)
        #expect(count.names.count > 10)
        for (k, name) in count.names.enumerated() {
            var changed = base
            var c = Changer(target: k)
            changed.visit(&c)
            #expect(base.sameBeforeOverlay(changed) == overlay.contains(name), "\(name)")
        }
        var env = base
        env.environment = .sandbox
        #expect(!base.sameBeforeOverlay(env))
    }
}

/// Gives every fact a value.
private struct Filler: PurchaseFactVisitor {
    mutating func text(_ name: StaticString, _ v: inout TextSpan) { v = TextSpan(offset: 1, count: 2) }
    mutating func text(_ name: StaticString, _ v: inout TextSpan?) { v = TextSpan(offset: 1, count: 2) }
    mutating func int32(_ name: StaticString, _ v: inout Int32?) { v = 3 }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { v = 4 }
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { v = 5 }
    mutating func bool(_ name: StaticString, _ v: inout Bool?) { v = false }
}

/// The names of the facts, in visit order.
private struct Counter: PurchaseFactVisitor {
    var names: [String] = []
    mutating func text(_ name: StaticString, _ v: inout TextSpan) { names.append("\(name)") }
    mutating func text(_ name: StaticString, _ v: inout TextSpan?) { names.append("\(name)") }
    mutating func int32(_ name: StaticString, _ v: inout Int32?) { names.append("\(name)") }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { names.append("\(name)") }
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { names.append("\(name)") }
    mutating func bool(_ name: StaticString, _ v: inout Bool?) { names.append("\(name)") }
}

/// Changes the fact at position `target` of the visit order.
private struct Changer: PurchaseFactVisitor {
    let target: Int
    var at = 0
    private mutating func mine() -> Bool {
        defer { at += 1 }
        return at == target
    }
    mutating func text(_ name: StaticString, _ v: inout TextSpan) { if mine() { v.count += 1 } }
    mutating func text(_ name: StaticString, _ v: inout TextSpan?) { if mine() { v = nil } }
    mutating func int32(_ name: StaticString, _ v: inout Int32?) { if mine() { v = nil } }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { if mine() { v = nil } }
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { if mine() { v = nil } }
    mutating func bool(_ name: StaticString, _ v: inout Bool?) { if mine() { v = nil } }
}
