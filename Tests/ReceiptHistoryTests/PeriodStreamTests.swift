import Foundation
import ReceiptModel
import Testing

@testable import ReceiptHistory

struct PeriodStreamTests {
    /// A period of `bundle` with transaction `tx`, under `original` (nil: keyed by its own transaction).
    static func period(bundle: String, original: String?, tx: String, date: Int64?) -> PeriodRecord {
        var text: [UInt8] = []
        func span(_ v: String) -> TextSpan {
            let s = TextSpan(offset: Int32(text.count), count: Int32(v.utf8.count))
            text += Array(v.utf8)
            return s
        }
        let bundleID = span(bundle)
        let transactionID = span(tx)
        let originalTransactionID = original.map { span($0) } ?? transactionID
        let productID = span("p")
        return PeriodRecord(
            text: text, environment: 0, bundleID: bundleID, originalTransactionID: originalTransactionID,
            transactionID: transactionID, productID: productID, purchaseDate: date,
            expiresDate: date.map { $0 + 1000 }, cancellationDate: nil, cancellationReason: nil, isTrialPeriod: false,
            isInIntroOfferPeriod: false, hasPromotionalOffer: false, lastSeen: nil)
    }

    /// Purchases as the purchases' merge gives them: per bundle, those without an original_transaction_id first
    /// (by purchase_date, then transaction_id), then by original_transaction_id, purchase_date, transaction_id.
    /// Some lone transactions share their id with another subscription's original_transaction_id.
    static func purchases(perBundle n: Int) -> [(period: PeriodRecord, original: Bool)] {
        var out: [(PeriodRecord, Bool)] = []
        for bundle in ["a.app", "b.app", "c.app"] {
            var lone: [PeriodRecord] = []
            var linked: [PeriodRecord] = []
            for i in 0..<n {
                let o = String(format: "%05d", (i * 7919) % n)
                if i % 3 == 0 {
                    let date: Int64? = i % 9 == 0 ? nil : Int64((i * 31) % 50)
                    lone.append(period(bundle: bundle, original: nil, tx: i % 2 == 0 ? o : "x\(i)", date: date))
                } else {
                    linked.append(period(bundle: bundle, original: o, tx: "t\(i)", date: Int64(i % 40)))
                }
            }
            lone.sort(by: PeriodRecord.ranksBefore)
            linked.sort(by: PeriodRecord.precedes)
            out += lone.map { ($0, false) } + linked.map { ($0, true) }
        }
        return out
    }

    static func run(perBundle n: Int, budget: Int) throws -> (
        rows: [PeriodRecord], input: [PeriodRecord], spilled: Int64
    ) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rf-periods-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = SpillStore<PeriodRecord>(segment: root + "/segment", workDirectory: root + "/work", budget: budget)
        var stream = PeriodStream(store: store)
        var rows: [PeriodRecord] = []
        let input = purchases(perBundle: n)
        for (p, original) in input {
            try stream.add(p, originalID: original) { r throws(HistoryError) in rows.append(r) }
        }
        try stream.finish { r throws(HistoryError) in rows.append(r) }
        return (rows, input.map(\.period), store.spilledBytes)
    }

    static func keys(_ rows: [PeriodRecord]) -> [String] {
        rows.map {
            String(decoding: $0.bytes($0.bundleID), as: UTF8.self) + "/"
                + String(decoding: $0.bytes($0.originalTransactionID), as: UTF8.self) + "/"
                + String(describing: $0.purchaseDate) + "/"
                + String(decoding: $0.bytes($0.transactionID), as: UTF8.self)
        }
    }

    @Test func givesThePeriodsInRowOrderWhenTheyFitInMemory() throws {
        let (rows, input, spilled) = try Self.run(perBundle: 300, budget: 64 << 20)
        #expect(spilled == 0)
        #expect(rows.count == input.count)
        #expect(Self.keys(rows) == Self.keys(input.sorted(by: PeriodRecord.precedes)))
    }

    @Test func givesTheSameRowsThroughTheStoreWhenTheHeldPeriodsExceedTheBudget() throws {
        // At the store's smallest budget (64 KiB) a few hundred held periods overflow it.
        let (rows, input, spilled) = try Self.run(perBundle: 3000, budget: 1)
        #expect(spilled > 0)
        #expect(rows.count == input.count)
        #expect(Self.keys(rows) == Self.keys(input.sorted(by: PeriodRecord.precedes)))
    }
}
