/// Exact statistics of one column chunk: null count, and min/max in the column's type-defined order.
///
/// Integers and timestamps compare signed; strings by unsigned bytes. Min/max are dropped (null count kept) when
/// a bound is longer than `maxBoundBytes`, because truncated bounds would no longer be exact values.
struct ColumnStatistics: ~Copyable {
    static let maxBoundBytes = 1024

    var nullCount: Int64 = 0
    var hasValue = false
    var minInt: Int64 = 0
    var maxInt: Int64 = 0
    private var minBytes = ByteBuffer()
    private var maxBytes = ByteBuffer()
    /// The first 16 bytes of the string min and max as two big-endian words, zero-padded (`key`). Zero-padded
    /// prefixes that differ order like the values they start, so a value whose key lies strictly between these
    /// two changes neither bound: nearly every value of the id and hash columns, decided here without a call or a
    /// memcmp.
    private var minKey: (UInt64, UInt64) = (0, 0)
    private var maxKey: (UInt64, UInt64) = (0, 0)

    mutating func reset() {
        nullCount = 0
        hasValue = false
        minBytes.removeAll()
        maxBytes.removeAll()
    }

    @inline(__always) mutating func update(_ v: Int64) {
        if !hasValue {
            hasValue = true
            minInt = v
            maxInt = v
        } else if v < minInt {
            minInt = v
        } else if v > maxInt {
            maxInt = v
        }
    }

    @inline(__always) mutating func update(_ v: UnsafeRawBufferPointer) {
        if hasValue && v.count >= 8 {
            let k = Self.wordKey(v)
            if minKey < k && k < maxKey { return }
        }
        updateBounds(v)
    }

    /// `key(v)` of a value of at least 8 bytes, in two loads.
    @inline(__always)
    static func wordKey(_ v: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        precondition(v.count >= 8)
        // In range: v holds at least 8 bytes, and the second load ends at or before v.count.
        let p = v.baseAddress!
        let hi = UInt64(bigEndian: p.loadUnaligned(as: UInt64.self))
        if v.count >= 16 { return (hi, UInt64(bigEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))) }
        // Bytes 8..<count at the top, zeros below (the shift is 64 for count 8: the smart shift gives 0).
        let last = UInt64(bigEndian: p.loadUnaligned(fromByteOffset: v.count - 8, as: UInt64.self))
        return (hi, last << (128 - 8 * v.count))
    }

    /// The exact update, for values the keys do not settle.
    @inline(never)
    private mutating func updateBounds(_ v: UnsafeRawBufferPointer) {
        if !hasValue {
            hasValue = true
            minBytes.append(v)
            maxBytes.append(v)
            minKey = Self.key(v)
            maxKey = minKey
        } else if compareBytes(v, minBytes.bytes) < 0 {
            minBytes.removeAll()
            minBytes.append(v)
            minKey = Self.key(v)
        } else if compareBytes(v, maxBytes.bytes) > 0 {
            maxBytes.removeAll()
            maxBytes.append(v)
            maxKey = Self.key(v)
        }
    }

    /// The first 16 bytes of `v` as two big-endian words, zero-padded.
    static func key(_ v: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var k: (UInt64, UInt64) = (0, 0)
        for (i, b) in v.prefix(16).enumerated() {
            if i < 8 { k.0 |= UInt64(b) << (56 - 8 * i) } else { k.1 |= UInt64(b) << (120 - 8 * i) }
        }
        return k
    }

    /// Appends the PLAIN encoding of the min (or max) bound for a column of `type`; false when it must be omitted.
    func appendBound(min: Bool, type: Parquet.PhysicalType, into out: inout [UInt8]) -> Bool {
        guard hasValue else { return false }
        let v = min ? minInt : maxInt
        switch type {
        case .boolean:
            out.append(v != 0 ? 1 : 0)
        case .int32:
            var le = Int32(truncatingIfNeeded: v).littleEndian
            withUnsafeBytes(of: &le) { out.append(contentsOf: $0) }
        case .int64:
            var le = v.littleEndian
            withUnsafeBytes(of: &le) { out.append(contentsOf: $0) }
        case .byteArray:
            if minBytes.count > Self.maxBoundBytes || maxBytes.count > Self.maxBoundBytes { return false }
            out.append(contentsOf: min ? minBytes.bytes : maxBytes.bytes)
        }
        return true
    }
}
