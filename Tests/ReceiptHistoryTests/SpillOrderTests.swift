import Testing

@testable import ReceiptHistory
@testable import ReceiptModel

/// The purchases' row order through byte keys is `precedes`'s order.
@Suite struct SpillOrderTests {
    /// A record with the given sort fields (the other facts do not take part in the order).
    static func record(
        _ environment: HistoryEnvironment, bundle: [UInt8], original: [UInt8]?, date: Int64?, transaction: [UInt8]
    ) -> PurchaseRecord {
        var facts = PurchaseFacts()
        facts.environment = environment
        var text: [UInt8] = []
        func span(_ b: [UInt8]) -> TextSpan {
            defer { text += b }
            return TextSpan(offset: Int32(text.count), count: Int32(b.count))
        }
        facts.bundleID = span(bundle)
        facts.transactionID = span(transaction)
        facts.originalTransactionID = original.map(span)
        facts.purchaseDate = date
        return PurchaseRecord(
            facts: facts, text: text, newest: Recency(created: 0, input: 0, line: 0, entry: 0), cancelledAt: nil,
            firstSeen: nil, lastSeen: nil, occurrences: 1)
    }

    @Test func keyOrderIsThePrecedesOrderWithPrefixesZeroBytesAndNulls() {
        // Strings that are prefixes of one another, hold 0 and 255 bytes, or are empty; dates null, negative,
        // extreme.
        let strings: [[UInt8]] = [
            [], [0], [0, 0], [0, 255], [1], [1, 0], [255], Array("com.a".utf8), Array("com.a.b".utf8),
        ]
        let dates: [Int64?] = [nil, Int64.min, -1, 0, 1, Int64.max]
        var rng = SystemRandomNumberGenerator()
        var records: [PurchaseRecord] = []
        var seen = Set<[UInt8]>()
        while records.count < 2_000 {
            let env: HistoryEnvironment = Bool.random(using: &rng) ? .production : .sandbox
            let bundle = strings.randomElement(using: &rng)!
            let transaction = strings.randomElement(using: &rng)! + [UInt8.random(in: 0...255, using: &rng)]
            // Keys are distinct in a store.
            guard seen.insert([env.rawValue, UInt8(bundle.count)] + bundle + transaction).inserted else { continue }
            let original = Bool.random(using: &rng) ? nil : strings.randomElement(using: &rng)!
            records.append(
                Self.record(
                    env, bundle: bundle, original: original, date: dates.randomElement(using: &rng)!,
                    transaction: transaction))
        }
        let byKeys = PurchaseRecord.rowOrder(records).map { Int($0) }
        let byPrecedes = records.indices.sorted { PurchaseRecord.precedes(records[$0], records[$1]) }
        #expect(byKeys == byPrecedes)
    }
}
