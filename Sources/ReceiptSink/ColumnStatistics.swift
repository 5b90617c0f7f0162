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
        if !hasValue {
            hasValue = true
            minBytes.append(v)
            maxBytes.append(v)
        } else if compareBytes(v, minBytes.bytes) < 0 {
            minBytes.removeAll()
            minBytes.append(v)
        } else if compareBytes(v, maxBytes.bytes) > 0 {
            maxBytes.removeAll()
            maxBytes.append(v)
        }
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
