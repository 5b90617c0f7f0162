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

    /// A record's bytes as the spill frames them: its order prefix, then its encoding.
    static func prefixed(_ r: PurchaseRecord) -> [UInt8] {
        var w = SpillWriter()
        var key: [UInt8] = []
        SpillPrefixed.append(r, to: &w, key: &key)
        return w.bytes
    }

    @Test func thePrefixGivesTheDecodedRecordsKeyOrderAndRecord() throws {
        let records = (0..<500).map { Self.record(key: $0, occurrence: $0 % 3) }
        let framed = records.map(Self.prefixed)
        var orders: [[UInt8]] = []
        for (r, bytes) in zip(records, framed) {
            try bytes.withUnsafeBytes { b in
                let p = try SpillPrefixed(b)
                orders.append(Array(p.order))
                #expect(Self.encoded(try p.decode(as: PurchaseRecord.self)) == Self.encoded(r))
            }
        }
        var positions = (0..<Int32(records.count)).map { $0 }
        positions.sort { compareBytes(orders[Int($0)], orders[Int($1)]) < 0 }
        #expect(positions == PurchaseRecord.rowOrder(records))
        func sameKey(_ i: Int, _ j: Int) throws -> Bool {
            try framed[i].withUnsafeBytes { a in
                try framed[j].withUnsafeBytes { b in
                    try SpillPrefixed(a).sameKey(try SpillPrefixed(b))
                }
            }
        }
        for i in 0..<records.count {
            for j in [0, 1, 7, 250] where j < records.count {
                #expect(try sameKey(i, j) == (records[i].key == records[j].key))
            }
        }
        // Another occurrence of a key (another original id and purchase date): the same key and split hash.
        let other = Self.prefixed(Self.record(key: 7, occurrence: 2))
        try other.withUnsafeBytes { a in
            try framed[7].withUnsafeBytes { b in
                let (x, y) = (try SpillPrefixed(a), try SpillPrefixed(b))
                #expect(x.sameKey(y))
                #expect(x.hash(seed: 3) == y.hash(seed: 3))
                #expect(compareBytes(x.order, y.order) != 0)
            }
        }
    }

    @Test func aPartitionMergesEachKeyOnceAndSortsAsTheDecodedRecords() throws {
        let adds = Self.adds(keys: 900)
        var partition = SpillPartition<PurchaseRecord>()
        for r in adds { try Self.prefixed(r).withUnsafeBytes { b in try partition.add(b) } }
        var rows: [[UInt8]] = []
        try partition.sorted { b throws(HistoryError) in
            rows.append(Self.encoded(try SpillPrefixed(b).decode(as: PurchaseRecord.self)))
        }
        #expect(rows == Self.expected(adds))
    }

    @Test func aDamagedPrefixOrRecordIsADamagedSpill() throws {
        let bytes = Self.prefixed(Self.record(key: 1, occurrence: 0))
        // Cut inside the order key.
        let cut = #expect(throws: HistoryError.self) {
            try bytes.prefix(6).withUnsafeBytes { b in _ = try SpillPrefixed(b) }
        }
        #expect(cut?.code == .spillDamaged)
        // A key's bounds beyond the order key.
        var bounds = bytes
        bounds[2] = 0x7f
        let range = #expect(throws: HistoryError.self) {
            try bounds.withUnsafeBytes { b in _ = try SpillPrefixed(b) }
        }
        #expect(range?.code == .spillDamaged)
        // The record cut short, or longer than it reads.
        for damaged in [Array(bytes.dropLast(3)), bytes + [0]] {
            let error = #expect(throws: HistoryError.self) {
                try damaged.withUnsafeBytes { b in _ = try SpillPrefixed(b).decode(as: PurchaseRecord.self) }
            }
            #expect(error?.code == .spillDamaged)
        }
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
