import Foundation
import Testing

@testable import ReceiptHistory
@testable import ReceiptModel

/// Purchase records merged and sorted in their encoded form give the records and the order of the decoded ones.
@Suite struct SpillPartitionTests {
    /// Record `n` of key `key`: occurrences of one key differ in their original id, purchase date, product and
    /// recency, so that which one is newest decides the merged record's place in the row order.
    static func record(key: Int, occurrence n: Int, product: Int = 12) -> PurchaseRecord {
        var facts = PurchaseFacts()
        facts.environment = key % 5 == 0 ? .sandbox : .production
        var text: [UInt8] = []
        func span(_ s: String) -> TextSpan {
            defer { text += Array(s.utf8) }
            return TextSpan(offset: Int32(text.count), count: Int32(s.utf8.count))
        }
        facts.bundleID = span(key % 3 == 0 ? "com.example" : "com.example.app")
        facts.transactionID = span("\(1_000_000 + key * 7_919 % 100_003)")
        facts.originalTransactionID = (key + n) % 4 == 0 ? nil : span("\(1_000_000 + (key / 3) + n % 2)")
        facts.productID = span(String(repeating: "p", count: product) + "\(key % 7)")
        facts.purchaseDate = (key + n) % 6 == 0 ? nil : 1_700_000_000_000 + Int64(key % 50) * 1_000 - Int64(n)
        facts.expiresDate = facts.purchaseDate.map { $0 + 2_592_000_000 }
        facts.quantity = 1
        let newest = Recency(created: 1_700_000_000_000 + Int64((n * 37) % 11), input: 0, line: Int64(key), entry: 0)
        return PurchaseRecord(
            facts: facts, text: text, newest: newest, cancelledAt: nil, firstSeen: newest.created,
            lastSeen: newest.created, occurrences: 1)
    }

    /// Each key `1 + key % 3` times, keys scattered.
    static func adds(keys: Int, product: Int = 12) -> [PurchaseRecord] {
        var out: [PurchaseRecord] = []
        for k in 0..<keys {
            for n in 0...(k % 3) { out.append(record(key: (k * 7_919) % keys, occurrence: n, product: product)) }
        }
        return out
    }

    static func encoded(_ r: PurchaseRecord) -> [UInt8] {
        var w = SpillWriter()
        r.encode(into: &w)
        return w.bytes
    }

    /// The rows the store must give: merged by key in memory, in `rowOrder`, as their encodings.
    static func expected(_ adds: [PurchaseRecord]) -> [[UInt8]] {
        var byKey: [PurchaseKey: PurchaseRecord] = [:]
        for r in adds {
            if byKey[r.key]?.merge(r) == nil { byKey[r.key] = r }
        }
        let held = Array(byKey.values)
        return PurchaseRecord.rowOrder(held).map { encoded(held[Int($0)]) }
    }

    @Test func theEncodedKeysAreTheDecodedRecordsKeyOrderAndPartition() throws {
        let reader = try #require(PurchaseRecord.encodedKeys)
        let records = (0..<500).map { Self.record(key: $0, occurrence: $0 % 3) }
        var order = OrderKeys()
        var keys: [[UInt8]] = []
        for r in records {
            var key: [UInt8] = []
            let h = try Self.encoded(r).withUnsafeBytes { b in try reader.read(b, 3, &key, &order) }
            #expect(Int(h % 16) == r.partition(16, seed: 3))
            keys.append(key)
        }
        #expect(order.sortedPositions() == PurchaseRecord.rowOrder(records))
        for i in 0..<records.count {
            for j in [0, 1, 7, 250] where j < records.count {
                #expect((keys[i] == keys[j]) == (records[i].key == records[j].key))
            }
        }
        // Another occurrence of a key: the same key bytes.
        var other: [UInt8] = []
        _ = try Self.encoded(Self.record(key: 7, occurrence: 1)).withUnsafeBytes { b in
            try reader.read(b, 0, &other, &order)
        }
        #expect(other == keys[7])
    }

    @Test func aPartitionMergesEachKeyOnceAndSortsAsTheDecodedRecords() throws {
        let adds = Self.adds(keys: 900)
        var partition = SpillPartition<PurchaseRecord>(reader: try #require(PurchaseRecord.encodedKeys))
        for r in adds { try Self.encoded(r).withUnsafeBytes { b in try partition.add(b) } }
        var rows: [[UInt8]] = []
        try partition.sorted { b throws(HistoryError) in
            var reader = SpillReader(b)
            rows.append(Self.encoded(try PurchaseRecord.decode(&reader)))
        }
        #expect(rows == Self.expected(adds))
    }

    @Test func aDamagedRecordIsADamagedSpill() throws {
        var partition = SpillPartition<PurchaseRecord>(reader: try #require(PurchaseRecord.encodedKeys))
        let bytes = Self.encoded(Self.record(key: 1, occurrence: 0))
        let error = #expect(throws: HistoryError.self) {
            try bytes.prefix(bytes.count / 2).withUnsafeBytes { b in try partition.add(b) }
        }
        #expect(error?.code == .spillDamaged)
        let longer = #expect(throws: HistoryError.self) {
            try (bytes + [0]).withUnsafeBytes { b in try partition.add(b) }
        }
        #expect(longer?.code == .spillDamaged)
    }

    /// Long product ids make the partitions outgrow the smallest budget, so that they are split again; a fan-in of
    /// 3 merges the runs in passes; what is in memory at the end joins the reduce.
    @Test func aStoreOfPurchasesGivesTheRowsOfTheInMemoryMergeThroughEveryPath() throws {
        let adds = Self.adds(keys: 6_000, product: 1_000)
        let want = Self.expected(adds)
        for fanIn in [3, 256] {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("rf-part-\(UUID().uuidString)")
                .path
            defer { try? FileManager.default.removeItem(atPath: root) }
            let store = SpillStore<PurchaseRecord>(
                segment: root + "/segment", workDirectory: root + "/work", budget: 1 << 16, fanIn: fanIn)
            let split = adds.count - 500
            for r in adds[..<split] { try store.add(r) }
            try store.spill()
            let segments = store.spilledRecords
            // The rest stays in memory, merged by key outside the store, as the collector's table holds it.
            var pending: [PurchaseKey: PurchaseRecord] = [:]
            for r in adds[split...] {
                if pending[r.key]?.merge(r) == nil { pending[r.key] = r }
            }
            var rows: [[UInt8]] = []
            try store.reduce(pending: Array(pending.values)) { r throws(HistoryError) in rows.append(Self.encoded(r)) }
            #expect(rows == want, "fan-in \(fanIn)")
            // Beyond the segments and one run record per row, records were written to split partitions again.
            #expect(store.spilledRecords - segments > Int64(want.count), "fan-in \(fanIn)")
        }
    }
}
