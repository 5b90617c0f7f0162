/// One partition's records merged by key in their encoded form, for a record type with a `SpillKeyReader`.
///
/// A record is kept as the bytes it was read as, beside its key's bytes, and found again through an
/// open-addressing index over the keys' hashes. Only a record that meets another of its key is decoded (once) and
/// merged; it is encoded again when the partition is written. Sorting reads each record's order key from its
/// bytes. So a record alone of its key goes from the segment to the sorted run as it was, never decoded.
struct SpillPartition<R: SpillRecord> {
    private struct Entry {
        var hash: Int
        /// The record's bytes in `records`.
        var offset: Int
        var count: Int
        /// The key's bytes in `keys`.
        var keyOffset: Int
        var keyCount: Int
        /// Index in `decoded` + 1 (0: the bytes are the record).
        var decoded: Int
    }

    private let reader: SpillKeyReader
    private var records: [UInt8] = []
    private var keys: [UInt8] = []
    private var entries: [Entry] = []
    /// Entry index + 1 (0: empty); a power of two, at most half used.
    private var slots = [Int32](repeating: 0, count: 1 << 10)
    private var decoded: [R] = []
    private var decodedBytes = 0
    private var scratchKey: [UInt8] = []
    private var scratchOrder = OrderKeys()

    init(reader: SpillKeyReader) { self.reader = reader }

    var isEmpty: Bool { entries.isEmpty }

    /// Memory held, about: the bytes of records and keys, the entries, the index and the decoded records.
    var bytes: Int {
        records.count + keys.count + entries.count * MemoryLayout<Entry>.stride + slots.count * 4 + decodedBytes
    }

    /// Adds an encoded record: held as it is when its key is new, merged into the one held otherwise.
    mutating func add(_ record: UnsafeRawBufferPointer) throws(HistoryError) {
        scratchKey.removeAll(keepingCapacity: true)
        scratchOrder.bytes.removeAll(keepingCapacity: true)
        _ = try reader.read(record, 0, &scratchKey, &scratchOrder)
        let h = scratchKey.withUnsafeBytes { k in
            var hasher = Hasher()
            hasher.combine(bytes: k)
            return hasher.finalize()
        }
        let mask = slots.count - 1
        var s = h & mask
        while slots[s] != 0 {
            let i = Int(slots[s]) - 1
            let e = entries[i]
            if e.hash == h && e.keyCount == scratchKey.count
                && keys.withUnsafeBytes({ k in
                    scratchKey.withUnsafeBytes { equalBytes(k.span(e.keyOffset, e.keyCount), $0) }
                })
            {
                try merge(record, into: i)
                return
            }
            s = (s + 1) & mask
        }
        entries.append(
            Entry(
                hash: h, offset: records.count, count: record.count, keyOffset: keys.count,
                keyCount: scratchKey.count, decoded: 0))
        records.append(contentsOf: record)
        keys.append(contentsOf: scratchKey)
        slots[s] = Int32(entries.count)
        if entries.count * 2 > slots.count { grow() }
    }

    /// Merges an encoded record into entry `i` (decoding the held one first, once).
    private mutating func merge(_ record: UnsafeRawBufferPointer, into i: Int) throws(HistoryError) {
        var other = SpillReader(record)
        let r = try R.decode(&other)
        if entries[i].decoded == 0 {
            let e = entries[i]
            let held: Result<R, HistoryError> = records.withUnsafeBytes { p in
                var reader = SpillReader(p.span(e.offset, e.count))
                do throws(HistoryError) {
                    return .success(try R.decode(&reader))
                } catch {
                    return .failure(error)
                }
            }
            let h = try held.get()
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

    /// Gives every record's encoding to `body` (in no particular order), and the partition among `count` of hash
    /// seed `seed` it falls in.
    func forEach(
        count: Int, seed: UInt64, _ body: (UnsafeRawBufferPointer, Int) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        var key: [UInt8] = []
        var order = OrderKeys()
        try each { record throws(HistoryError) in
            key.removeAll(keepingCapacity: true)
            order.bytes.removeAll(keepingCapacity: true)
            let h = try reader.read(record, seed, &key, &order)
            try body(record, Int(h % UInt64(count)))
        }
    }

    /// Gives every record's encoding to `body` in row order.
    mutating func sorted(_ body: (UnsafeRawBufferPointer) throws(HistoryError) -> Void) throws(HistoryError) {
        // The merged records are encoded at the end of `records`, in place of their first bytes.
        var w = SpillWriter()
        for i in entries.indices where entries[i].decoded != 0 {
            w.bytes.removeAll(keepingCapacity: true)
            decoded[entries[i].decoded - 1].encode(into: &w)
            entries[i].offset = records.count
            entries[i].count = w.bytes.count
            entries[i].decoded = 0
            records.append(contentsOf: w.bytes)
        }
        decoded = []
        decodedBytes = 0
        var order = OrderKeys()
        order.reserve(records: entries.count)
        var key: [UInt8] = []
        try spillBytes(records) { p throws(HistoryError) in
            for e in entries {
                key.removeAll(keepingCapacity: true)
                _ = try reader.read(p.span(e.offset, e.count), 0, &key, &order)
            }
        }
        let positions = order.sortedPositions()
        try spillBytes(records) { p throws(HistoryError) in
            for i in positions {
                let e = entries[Int(i)]
                try body(p.span(e.offset, e.count))
            }
        }
    }

    /// Every record's encoding, the merged ones encoded anew.
    private func each(_ body: (UnsafeRawBufferPointer) throws(HistoryError) -> Void) throws(HistoryError) {
        var w = SpillWriter()
        try spillBytes(records) { p throws(HistoryError) in
            for e in entries {
                if e.decoded != 0 {
                    w.bytes.removeAll(keepingCapacity: true)
                    decoded[e.decoded - 1].encode(into: &w)
                    try spillBytes(w.bytes) { b throws(HistoryError) in try body(b) }
                } else {
                    try body(p.span(e.offset, e.count))
                }
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
