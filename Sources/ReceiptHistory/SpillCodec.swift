import Foundation

/// Appends the binary form of spilled records: little-endian fixed-width integers, length-prefixed byte strings
/// and one-byte presence flags for optional values. The format lives only inside one run's spill folder.
struct SpillWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }

    mutating func i64(_ v: Int64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func i32(_ v: Int32) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func text(_ v: [UInt8]) {
        i32(Int32(v.count))
        bytes.append(contentsOf: v)
    }

    mutating func text(_ v: [UInt8]?) {
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

    mutating func text() throws(HistoryError) -> [UInt8] {
        let n = Int(try i32())
        try need(n)
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }

    mutating func optionalText() throws(HistoryError) -> [UInt8]? { try u8() == 0 ? nil : try text() }
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
