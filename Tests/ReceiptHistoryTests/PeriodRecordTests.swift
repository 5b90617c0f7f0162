import Foundation
import ReceiptModel
import Testing

@testable import ReceiptHistory

/// A period made from a `purchases` record (`PeriodRecord.init(_:)`), and read back from the spill.
@Suite("History periods")
struct PeriodRecordTests {
    /// The records of one receipt's entries, in order.
    private func records(_ receipt: Receipt) -> [PurchaseRecord] {
        let feed = batch([receipt]).history
        return feed.purchases.map { o in
            feed.text.withUnsafeBytes {
                PurchaseRecord(o, input: 0, text: UnsafeRawBufferPointer(rebasing: $0[o.text]))
            }
        }
    }

    private func encoded(_ p: PeriodRecord) -> [UInt8] {
        var w = SpillWriter()
        p.encode(into: &w)
        return w.bytes
    }

    private func sameStorage(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { x.baseAddress == $0.baseAddress } }
    }

    private func string(_ p: PeriodRecord, _ s: TextSpan?) -> String? {
        p.bytes(s).map { String(decoding: $0, as: UTF8.self) }
    }

    private let receipt = Receipt(
        line: 1, created: day(40),
        entries: [
            Entry(transactionID: "1", originalTransactionID: "1", purchase: day(1), expires: day(31)),
            Entry(
                transactionID: "3", originalTransactionID: "9", product: "com.example.yearly", purchase: day(2),
                expires: day(367), cancellation: day(5), reason: 1, trial: true),
            Entry(transactionID: "4", product: "com.example.monthly", purchase: day(3), expires: day(33)),
        ],
        user: "u-1", userField: true)

    @Test func aPeriodNamesItsPurchasesBytesInPlace() {
        let all = records(receipt)
        #expect(all.count == 3)
        for r in all {
            let p = PeriodRecord(r)
            #expect(sameStorage(p.text, r.text))
            #expect(string(p, p.bundleID) == String(decoding: r.bytes(r.facts.bundleID), as: UTF8.self))
            #expect(string(p, p.transactionID) == String(decoding: r.bytes(r.facts.transactionID), as: UTF8.self))
            #expect(string(p, p.productID) == String(decoding: r.bytes(r.facts.productID), as: UTF8.self))
            #expect(string(p, p.userID) == "u-1")
        }
        let yearly = PeriodRecord(all[1])
        #expect(string(yearly, yearly.originalTransactionID) == "9")
        #expect(string(yearly, yearly.productID) == "com.example.yearly")
        #expect(yearly.cancellationReason == 1 && yearly.isTrialPeriod)
        // Without an original_transaction_id the period is its own subscription, keyed by its transaction_id.
        let lone = PeriodRecord(all[2])
        #expect(string(lone, lone.originalTransactionID) == "4")
    }

    @Test func aPeriodReadBackFromTheSpillEqualsTheOneWritten() throws {
        for r in records(receipt) {
            let p = PeriodRecord(r)
            let bytes = encoded(p)
            let back = try bytes.withUnsafeBytes { b in
                var reader = SpillReader(b)
                let back = try PeriodRecord.decode(&reader)
                #expect(reader.atEnd)
                return back
            }
            #expect(encoded(back) == bytes)
            #expect(PeriodKey(period: back) == PeriodKey(period: p))
            #expect(string(back, back.userID) == "u-1")
            #expect(!PeriodRecord.precedes(back, p) && !PeriodRecord.precedes(p, back))
        }
    }

    @Test func aCompactedPeriodHoldsOnlyItsOwnBytesAndEqualsTheOriginal() {
        for r in records(receipt) {
            let p = PeriodRecord(r)
            let c = p.compacted()
            #expect(encoded(c) == encoded(p))
            #expect(PeriodKey(period: c) == PeriodKey(period: p))
            #expect(!sameStorage(c.text, r.text))
            let own = [p.bundleID, p.originalTransactionID, p.transactionID, p.productID, p.userID, p.appAccountToken]
                .reduce(0) { $0 + Int($1?.count ?? 0) }
            #expect(c.text.count == own)
        }
    }
}
