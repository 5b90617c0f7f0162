/// Where a record's key lies in its order key (`SpillRecord.spillOrderKey`): the key is the bytes before
/// `headEnd` followed by the bytes from `tailStart` on, so that two records have the same key exactly when those
/// bytes are equal.
struct SpillKeyBounds {
    var headEnd: Int
    var tailStart: Int
}

/// A spilled record of a type with an order prefix (`SpillRecord.hasOrderPrefix`), read in place: its order key,
/// the two parts of its key within it, and its encoding.
///
/// The layout, inside the record's length frame: the order key's length, the key's head end and tail start
/// (varints), the order key's bytes, then the record's encoding. Merging, sorting and splitting a partition read
/// only the prefix, so a record is decoded only to be merged with another of its key or to be emitted.
struct SpillPrefixed {
    /// Bytes that compare as the records do (`precedes`), bytewise.
    let order: UnsafeRawBufferPointer
    /// The key's first part (the start of `order`).
    let head: UnsafeRawBufferPointer
    /// The key's second part (the end of `order`).
    let tail: UnsafeRawBufferPointer
    /// The record's encoding (`SpillRecord.encode`).
    let record: UnsafeRawBufferPointer
    /// Where `order` starts in the framed bytes.
    let orderStart: Int

    /// Reads the prefix of `body` (one record's framed bytes); a prefix out of range means a damaged spill.
    @inline(__always)
    init(_ body: UnsafeRawBufferPointer) throws(HistoryError) {
        var r = SpillReader(body)
        let count = Int(try r.varint32())
        let headEnd = Int(try r.varint32())
        let tailStart = Int(try r.varint32())
        guard headEnd <= tailStart, tailStart <= count else {
            throw HistoryError(.spillDamaged, detail: "a record's order key is out of range")
        }
        orderStart = r.offset
        order = try r.bytes(count)
        head = UnsafeRawBufferPointer(rebasing: order[0..<headEnd])
        tail = UnsafeRawBufferPointer(rebasing: order[tailStart..<count])
        record = UnsafeRawBufferPointer(rebasing: body[r.offset...])
    }

    /// The key's hash for splitting a partition by `seed`: stable, so that it does not depend on the process.
    @inline(__always)
    func hash(seed: UInt64) -> UInt64 {
        var h = StableHasher(seed: seed)
        h.combine(head)
        h.combine(tail)
        return h.finalize()
    }

    /// Whether `self` and `other` have the same key.
    @inline(__always)
    func sameKey(_ other: SpillPrefixed) -> Bool {
        equalBytes(head, other.head) && equalBytes(tail, other.tail)
    }

    /// Decodes the record.
    func decode<R: SpillRecord>(as: R.Type) throws(HistoryError) -> R {
        var reader = SpillReader(record)
        let r = try R.decode(&reader)
        if !reader.atEnd { throw HistoryError(.spillDamaged, detail: "a record is longer than it reads") }
        return r
    }

    /// Decodes the record over `value` (reusing its storage).
    func decode<R: SpillRecord>(into value: inout R) throws(HistoryError) {
        var reader = SpillReader(record)
        try R.decode(&reader, into: &value)
        if !reader.atEnd { throw HistoryError(.spillDamaged, detail: "a record is longer than it reads") }
    }

    /// Appends `record`'s prefix and encoding to `w` (unframed); `key` is scratch space.
    static func append<R: SpillRecord>(_ record: R, to w: inout SpillWriter, key: inout [UInt8]) {
        key.removeAll(keepingCapacity: true)
        let bounds = record.spillOrderKey(into: &key)
        w.varint(UInt64(key.count))
        w.varint(UInt64(bounds.headEnd))
        w.varint(UInt64(bounds.tailStart))
        w.bytes.append(contentsOf: key)
        record.encode(into: &w)
    }
}
