/// One partition's records merged by key in their encoded form, for a record type with an order prefix
/// (`SpillPrefixed`).
///
/// A record is kept as the bytes it was read as (prefix and encoding), and found again through an open-addressing
/// index over its key's hash; its key and order key are read from the prefix, in place. Only a record that meets
/// another of its key is decoded (once) and merged; it is encoded again, with its prefix, when the partition is
/// written. So a record alone of its key goes from the segment to the sorted run as it was, never decoded.
struct SpillPartition<R: SpillRecord> {
    private struct Entry {
        var hash: Int
        /// The record's bytes in `records`.
        var offset: Int
        var count: Int
        /// Index in `decoded` + 1 (0: the bytes are the record).
        var decoded: Int
    }

    private var records: [UInt8] = []
    private var entries: [Entry] = []
    /// Entry index + 1 (0: empty); a power of two, at most half used.
    private var slots = [Int32](repeating: 0, count: 1 << 10)
    private var decoded: [R] = []
    private var decodedBytes = 0

    init() {}

    var isEmpty: Bool { entries.isEmpty }

    /// Memory held, about: the bytes of records, the entries, the index and the decoded records.
    var bytes: Int {
        records.count + entries.count * MemoryLayout<Entry>.stride + slots.count * 4 + decodedBytes
    }

    /// Adds a prefixed record: held as it is when its key is new, merged into the one held otherwise.
    mutating func add(_ record: UnsafeRawBufferPointer) throws(HistoryError) {
        let p = try SpillPrefixed(record)
        var hasher = Hasher()
        hasher.combine(bytes: p.head)
        hasher.combine(bytes: p.tail)
        let h = hasher.finalize()
        let mask = slots.count - 1
        var s = h & mask
        while slots[s] != 0 {
            let i = Int(slots[s]) - 1
            let e = entries[i]
            if e.hash == h {
                let same = try spillBytes(records) { b throws(HistoryError) in
                    try SpillPrefixed(b.span(e.offset, e.count)).sameKey(p)
                }
                if same { return try merge(p, into: i) }
            }
            s = (s + 1) & mask
        }
        entries.append(Entry(hash: h, offset: records.count, count: record.count, decoded: 0))
        records.append(contentsOf: record)
        slots[s] = Int32(entries.count)
        if entries.count * 2 > slots.count { grow() }
    }

    /// Merges a prefixed record into entry `i` (decoding the held one first, once).
    private mutating func merge(_ p: SpillPrefixed, into i: Int) throws(HistoryError) {
        let r = try p.decode(as: R.self)
        if entries[i].decoded == 0 {
            let e = entries[i]
            let h = try spillBytes(records) { b throws(HistoryError) in
                try SpillPrefixed(b.span(e.offset, e.count)).decode(as: R.self)
            }
            decoded.append(h)
            decodedBytes += h.estimatedBytes
            entries[i].decoded = decoded.count
        }
        let d = entries[i].decoded - 1
        decodedBytes -= decoded[d].estimatedBytes
        decoded[d].merge(r)
        decodedBytes += decoded[d].estimatedBytes
    }

    private mutating func grow() {
        slots = [Int32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (i, e) in entries.enumerated() {
            var s = e.hash & mask
            while slots[s] != 0 { s = (s + 1) & mask }
            slots[s] = Int32(i + 1)
        }
    }

    /// Encodes the merged records anew, with their prefixes, at the end of `records`, in place of their first
    /// bytes.
    private mutating func encodeMerged() {
        var w = SpillWriter()
        var key: [UInt8] = []
        for i in entries.indices where entries[i].decoded != 0 {
            w.bytes.removeAll(keepingCapacity: true)
            SpillPrefixed.append(decoded[entries[i].decoded - 1], to: &w, key: &key)
            entries[i].offset = records.count
            entries[i].count = w.bytes.count
            entries[i].decoded = 0
            records.append(contentsOf: w.bytes)
        }
        decoded = []
        decodedBytes = 0
    }

    /// Gives every record's bytes to `body` (in no particular order), and the partition among `count` of hash seed
    /// `seed` it falls in.
    mutating func forEach(
        count: Int, seed: UInt64, _ body: (UnsafeRawBufferPointer, Int) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        encodeMerged()
        try spillBytes(records) { b throws(HistoryError) in
            for e in entries {
                let record = b.span(e.offset, e.count)
                let h = try SpillPrefixed(record).hash(seed: seed)
                try body(record, Int(h % UInt64(count)))
            }
        }
    }

    /// Gives every record's bytes to `body` in row order (their order keys' bytewise order).
    mutating func sorted(_ body: (UnsafeRawBufferPointer) throws(HistoryError) -> Void) throws(HistoryError) {
        encodeMerged()
        // Each record's order key, located once: (start, count) in `records`.
        var keys: [(Int, Int)] = []
        keys.reserveCapacity(entries.count)
        try spillBytes(records) { b throws(HistoryError) in
            for e in entries {
                let p = try SpillPrefixed(b.span(e.offset, e.count))
                keys.append((e.offset + p.orderStart, p.order.count))
            }
        }
        var positions = (0..<Int32(entries.count)).map { $0 }
        records.withUnsafeBytes { b in
            keys.withUnsafeBufferPointer { k in
                positions.sort { x, y in
                    let (s0, n0) = k[Int(x)]
                    let (s1, n1) = k[Int(y)]
                    return compareBytes(b.span(s0, n0), b.span(s1, n1)) < 0
                }
            }
        }
        try spillBytes(records) { b throws(HistoryError) in
            for i in positions {
                let e = entries[Int(i)]
                try body(b.span(e.offset, e.count))
            }
        }
    }
}

/// `withUnsafeBytes` for a body that throws a `HistoryError` (the array's own method rethrows untyped).
@inline(__always)
func spillBytes<T>(_ a: [UInt8], _ body: (UnsafeRawBufferPointer) throws(HistoryError) -> T) throws(HistoryError) -> T {
    let result: Result<T, HistoryError> = a.withUnsafeBytes { p in
        do throws(HistoryError) {
            return .success(try body(p))
        } catch {
            return .failure(error)
        }
    }
    return try result.get()
}
