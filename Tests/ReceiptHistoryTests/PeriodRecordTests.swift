import Foundation
import ReceiptModel
import Testing

@testable import ReceiptHistory

/// A period made from a `purchases` record (`PeriodRecord.init(_:sharing:)`).
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

    private func sameStorage(_ a: [UInt8]?, _ b: [UInt8]?) -> Bool {
        guard let a, let b else { return false }
        return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { x.baseAddress == $0.baseAddress } }
    }

    @Test func aPeriodMadeSharingThePreviousOneEqualsOneMadeAlone() {
        let receipt = Receipt(
            line: 1, created: day(40),
            entries: [
                Entry(transactionID: "1", originalTransactionID: "1", purchase: day(1), expires: day(31)),
                Entry(transactionID: "2", originalTransactionID: "1", purchase: day(31), expires: day(61)),
                Entry(
                    transactionID: "3", originalTransactionID: "9", product: "com.example.yearly", purchase: day(2),
                    expires: day(367), cancellation: day(5), reason: 1, trial: true),
                Entry(transactionID: "4", product: "com.example.monthly", purchase: day(3), expires: day(33)),
            ],
            user: "u-1", userField: true)
        let all = records(receipt)
        #expect(all.count == 4)
        var previous: PeriodRecord? = nil
        for r in all {
            let shared = PeriodRecord(r, sharing: previous)
            #expect(encoded(shared) == encoded(PeriodRecord(r)))
            previous = shared
        }
    }

    @Test func equalByteStringsAreSharedWithThePreviousPeriodAndOthersAreCopied() {
        let receipt = Receipt(
            line: 1, created: day(40),
            entries: [
                Entry(transactionID: "1", originalTransactionID: "1", purchase: day(1), expires: day(31)),
                Entry(
                    transactionID: "2", originalTransactionID: "1", product: "com.example.other", purchase: day(31),
                    expires: day(61)),
            ],
            user: "u-1", userField: true)
        let all = records(receipt)
        let first = PeriodRecord(all[0])
        let second = PeriodRecord(all[1], sharing: first)
        #expect(sameStorage(second.key.subscription.bundleID, first.key.subscription.bundleID))
        #expect(
            sameStorage(second.key.subscription.originalTransactionID, first.key.subscription.originalTransactionID))
        #expect(sameStorage(second.userID, first.userID))
        #expect(!sameStorage(second.productID, first.productID))
        #expect(second.productID == Array("com.example.other".utf8))
        #expect(second.transactionID == Array("2".utf8))
    }
}
