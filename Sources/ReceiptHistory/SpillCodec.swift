import Foundation
import ReceiptModel

/// Appends the binary form of spilled records: little-endian fixed-width integers or LEB128 varints (signed ones
/// zigzag-coded, so that small magnitudes take one byte), length-prefixed byte strings and one-byte presence flags
/// for optional values. The format lives only inside one run's spill folder (`SpillFormat`).
struct SpillWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    /// `v` in 7-bit groups, least significant first, each with a continuation bit (1 to 10 bytes).
    @inline(__always)
    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A signed value, zigzag-coded (0, -1, 1, -2, ... become 0, 1, 2, 3, ...).
    @inline(__always)
    mutating func zigzag(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    /// A byte string: its length as a varint, then its bytes.
    @inline(__always)
    mutating func bytes(_ b: UnsafeRawBufferPointer) {
        varint(UInt64(b.count))
        bytes.append(contentsOf: b)
    }

    mutating func i64(_ v: Int64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func i32(_ v: Int32) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func text(_ v: [UInt8]) { v.withUnsafeBytes { text($0) } }

    mutating func text(_ v: [UInt8]?) {
        guard let v else { return u8(0) }
        u8(1)
        text(v)
    }

    /// A byte string: its length as an int32, then its bytes.
    mutating func text(_ v: UnsafeRawBufferPointer) {
        i32(Int32(v.count))
        bytes.append(contentsOf: v)
    }

    mutating func text(_ v: UnsafeRawBufferPointer?) {
        guard let v else { return u8(0) }
        u8(1)
        text(v)
    }

    mutating func i64(_ v: Int64?) {
        guard let v else { return u8(0) }
        u8(1)
        i64(v)
    }

    mutating func i32(_ v: Int32?) {
        guard let v else { return u8(0) }
        u8(1)
        i32(v)
    }

    mutating func bool(_ v: Bool?) {
        guard let v else { return u8(0) }
        u8(v ? 2 : 1)
    }

    /// A timestamp as its difference from `base`, which then becomes it (a record's dates lie close together);
    /// nil as a single 0.
    @inline(__always)
    mutating func timestamp(_ v: Int64?, after base: inout Int64) {
        guard let t = v else { return u8(0) }
        optional(t &- base)
        base = t
    }

    /// An optional signed value in one varint: 0 for nil, otherwise its zigzag code plus one (65 bits for the one
    /// value whose code is `UInt64.max`).
    @inline(__always)
    mutating func optional(_ v: Int64?) {
        guard let v else { return u8(0) }
        let z = UInt64(bitPattern: (v << 1) ^ (v >> 63))
        guard z == UInt64.max else { return varint(z + 1) }
        bytes.append(contentsOf: repeatElement(0x80, count: 9))
        bytes.append(0x02)
    }
}

/// Reads what `SpillWriter` wrote. A record cut short or out of range means the spill was damaged on disk.
struct SpillReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { offset >= bytes.count }

    private mutating func need(_ n: Int) throws(HistoryError) {
        if n < 0 || bytes.count - offset < n {
            throw HistoryError(.spillDamaged, detail: "a record is cut short")
        }
    }

    mutating func u8() throws(HistoryError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func i64() throws(HistoryError) -> Int64 {
        try need(8)
        defer { offset += 8 }
        return Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    mutating func i32() throws(HistoryError) -> Int32 {
        try need(4)
        defer { offset += 4 }
        return Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    /// A varint (`SpillWriter.varint`); one byte, the common case, without a call.
    @inline(__always)
    mutating func varint() throws(HistoryError) -> UInt64 {
        if offset < bytes.count, bytes[offset] < 0x80 {
            defer { offset += 1 }
            return UInt64(bytes[offset])
        }
        return try longVarint()
    }

    private mutating func longVarint() throws(HistoryError) -> UInt64 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8()
            // The tenth byte may carry only the top bit of 64.
            if shift == 63 && b > 1 { throw HistoryError(.spillDamaged, detail: "a number is out of range") }
            v |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return v }
            shift += 7
        }
    }

    /// What `SpillWriter.optional` wrote; one byte, the common case, without a call.
    @inline(__always)
    mutating func optional() throws(HistoryError) -> Int64? {
        if offset < bytes.count, bytes[offset] < 0x80 {
            let v = UInt64(bytes[offset])
            offset += 1
            guard v != 0 else { return nil }
            let z = v - 1
            return Int64(bitPattern: z >> 1) ^ -Int64(bitPattern: z & 1)
        }
        return try longOptional()
    }

    private mutating func longOptional() throws(HistoryError) -> Int64? {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        var b: UInt8 = 0
        repeat {
            b = try u8()
            if shift == 63 {
                // Bit 64 stands for 2^64: only the code of Int64.min (UInt64.max) plus one has it.
                guard b <= 1 || (b == 2 && v == 0) else {
                    throw HistoryError(.spillDamaged, detail: "a number is out of range")
                }
                if b == 2 { return Int64.min }
            }
            v |= UInt64(b & 0x7f) << shift
            shift += 7
        } while b >= 0x80
        guard v != 0 else { return nil }
        let z = v - 1
        return Int64(bitPattern: z >> 1) ^ -Int64(bitPattern: z & 1)
    }

    mutating func zigzag() throws(HistoryError) -> Int64 {
        let u = try varint()
        return Int64(bitPattern: u >> 1) ^ -Int64(bitPattern: u & 1)
    }

    /// A varint that must fit `Int32` (a length or a narrow column).
    mutating func varint32() throws(HistoryError) -> Int32 {
        let u = try varint()
        guard u <= UInt64(Int32.max) else { throw HistoryError(.spillDamaged, detail: "a number is out of range") }
        return Int32(u)
    }

    /// `n` bytes in place (valid while the reader's buffer is).
    mutating func bytes(_ n: Int) throws(HistoryError) -> UnsafeRawBufferPointer {
        try need(n)
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
    }

    mutating func text() throws(HistoryError) -> [UInt8] {
        let n = Int(try i32())
        try need(n)
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }

    mutating func optionalText() throws(HistoryError) -> [UInt8]? { try u8() == 0 ? nil : try text() }

    /// What `text` reads, appended to `out`: where it lies there.
    mutating func text(into out: inout [UInt8]) throws(HistoryError) -> TextSpan {
        let n = Int(try i32())
        let b = try bytes(n)
        let s = TextSpan(offset: Int32(out.count), count: Int32(n))
        out.append(contentsOf: b)
        return s
    }

    mutating func optionalText(into out: inout [UInt8]) throws(HistoryError) -> TextSpan? {
        try u8() == 0 ? nil : try text(into: &out)
    }
    mutating func optionalI64() throws(HistoryError) -> Int64? { try u8() == 0 ? nil : try i64() }
    mutating func optionalI32() throws(HistoryError) -> Int32? { try u8() == 0 ? nil : try i32() }

    mutating func optionalBool() throws(HistoryError) -> Bool? {
        switch try u8() {
        case 0: return nil
        case 1: return false
        default: return true
        }
    }
}

/// Bytewise comparison of two byte strings (`memcmp` order, a prefix first).
@inline(__always)
func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let n = min(a.count, b.count)
    var i = 0
    while i < n {
        if a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        i += 1
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// Bytewise comparison of two byte strings (`memcmp` order, a prefix first).
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n > 0 {
        let c = memcmp(a.baseAddress!, b.baseAddress!, n)  // n > 0: both have a base
        if c != 0 { return c < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// FNV-1a over the bytes, mixed with `seed`: stable across processes (Swift's `Hasher` is seeded per process),
/// so a resumed run puts a key into the same partition as the run it continues.
@inline(__always)
func stableHash(_ parts: [UInt8]..., seed: UInt64) -> UInt64 {
    var h = StableHasher(seed: seed)
    for p in parts { p.withUnsafeBytes { h.combine($0) } }
    return h.finalize()
}

/// `stableHash` of an environment byte and two byte strings.
@inline(__always)
func stableHash(
    _ environment: UInt8, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, seed: UInt64
) -> UInt64 {
    var h = StableHasher(seed: seed)
    withUnsafeBytes(of: environment) { h.combine($0) }
    h.combine(a)
    h.combine(b)
    return h.finalize()
}

/// The state of `stableHash`: each part's bytes, then a separator.
struct StableHasher {
    private var h: UInt64

    @inline(__always)
    init(seed: UInt64) { h = 0xcbf2_9ce4_8422_2325 ^ (seed &* 0x9E37_79B9_7F4A_7C15) }

    @inline(__always)
    mutating func combine(_ p: UnsafeRawBufferPointer) {
        for b in p {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        h ^= 0xff
        h = h &* 0x100_0000_01b3
    }

    @inline(__always)
    func finalize() -> UInt64 {
        var x = h
        x ^= x >> 33
        x = x &* 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        return x
    }
}
