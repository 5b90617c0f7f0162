/// Parquet's RLE / bit-packed hybrid encoding (Encodings.md), for definition levels and dictionary indices.
///
/// Runs of 8 or more equal values become RLE runs; everything else is bit-packed in groups of 8, LSB first. A
/// bit-packed run is cut only at group boundaries, so only the final run can carry padding (readers stop at the
/// page's value count; padding inside an earlier run would insert values).
enum RLEHybrid {
    /// The most bytes `encode` writes for `n` values of `bitWidth` bits: per 8 values at most one header (a 5-byte
    /// varint) and either one packed group (`bitWidth` bytes) or one RLE value (at most 4 bytes).
    static func maxEncodedCount(_ n: Int, bitWidth: Int) -> Int { (n / 8 + 2) * (5 + max(bitWidth, 4)) }

    /// Appends `values` (each below `1 << bitWidth`, `bitWidth` in 1...32) with no length prefix.
    static func encode<T: FixedWidthInteger & UnsignedInteger>(
        _ values: UnsafeBufferPointer<T>, bitWidth: Int, into out: inout ByteBuffer
    ) {
        precondition(bitWidth >= 1 && bitWidth <= 32)
        let n = values.count
        out.reserve(maxEncodedCount(n, bitWidth: bitWidth))
        var i = 0
        while i < n {
            let run = runLength(values, at: i)
            if run >= 8 {
                appendVarint(UInt64(run) << 1, into: &out)
                appendValue(UInt64(values[i]), bitWidth: bitWidth, into: &out)  // i < n
                i += run
                continue
            }
            // Bit-packed: whole groups of 8 until a long run starts at a group boundary, or the input ends.
            var end = i + 8
            while end < n && runLength(values, at: end) < 8 { end += 8 }
            let groups = (end - i) / 8
            appendVarint(UInt64(groups) << 1 | 1, into: &out)
            appendPacked(values, from: i, to: min(end, n), groups: groups, bitWidth: bitWidth, into: &out)
            i = end
        }
    }

    /// Length of the run of equal values starting at `i` (`i < values.count`).
    @inline(__always)
    static func runLength<T: FixedWidthInteger>(_ values: UnsafeBufferPointer<T>, at i: Int) -> Int {
        let n = values.count
        let v = values[i]
        var j = i + 1
        if T.self == UInt8.self, let base = values.baseAddress {
            // Definition levels: eight at a time while whole words match (j + 8 <= n keeps the load in range).
            let splat = UInt64(truncatingIfNeeded: v) &* 0x0101_0101_0101_0101
            let raw = UnsafeRawPointer(base)
            while j + 8 <= n && raw.loadUnaligned(fromByteOffset: j, as: UInt64.self) == splat { j += 8 }
        }
        while j < n && values[j] == v { j += 1 }
        return j - i
    }

    /// Appends a ULEB128 varint; room reserved by `encode` (or by the caller).
    @inline(__always)
    static func appendVarint(_ v: UInt64, into out: inout ByteBuffer) {
        var v = v
        while v >= 0x80 {
            out.store(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.store(UInt8(truncatingIfNeeded: v))
    }

    /// An RLE run's value: little-endian in ceil(bitWidth / 8) bytes.
    @inline(__always)
    static func appendValue(_ v: UInt64, bitWidth: Int, into out: inout ByteBuffer) {
        var v = v
        for _ in 0..<((bitWidth + 7) / 8) {
            out.store(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }

    /// Packs `values[from..<to]` LSB first, zero-padded to `groups * 8` values.
    static func appendPacked<T: FixedWidthInteger & UnsignedInteger>(
        _ values: UnsafeBufferPointer<T>, from: Int, to: Int, groups: Int, bitWidth: Int, into out: inout ByteBuffer
    ) {
        if T.self == UInt8.self && bitWidth == 1, let base = values.baseAddress {
            // Definition levels (bytes 0 or 1): a whole group is one word, and one multiply gathers bit 0 of each
            // byte into the top byte, byte k to bit k (the partial products never overlap, so nothing carries).
            let raw = UnsafeRawPointer(base)
            var k = from
            while k + 8 <= to {
                let x = raw.loadUnaligned(fromByteOffset: k, as: UInt64.self)  // k + 8 <= to <= count
                out.store(UInt8(truncatingIfNeeded: (x &* 0x0102_0408_1020_4080) >> 56))
                k += 8
            }
            if k < to {
                var bits: UInt8 = 0
                for j in k..<to { bits |= UInt8(truncatingIfNeeded: values[j]) << UInt8(j - k) }  // j < to <= count
                out.store(bits)
                k += 8
            }
            // Groups past the values (padding) are zero bytes.
            while k < from + groups * 8 {
                out.store(0)
                k += 8
            }
            return
        }
        var acc: UInt64 = 0
        var bits = 0
        for k in 0..<(groups * 8) {
            let v: UInt64 = from + k < to ? UInt64(values[from + k]) : 0  // checked against `to` <= count
            acc |= v << UInt64(bits)
            bits += bitWidth
            while bits >= 8 {
                out.store(UInt8(truncatingIfNeeded: acc))
                acc >>= 8
                bits -= 8
            }
        }
        // groups * 8 * bitWidth is a multiple of 8, so nothing is left in `acc`.
    }

    /// Bits needed to represent `maxValue` (at least 1: a zero width was accepted by readers, but 1 is safer).
    static func bitWidth(forMax maxValue: UInt32) -> Int {
        max(1, 32 - maxValue.leadingZeroBitCount)
    }
}
