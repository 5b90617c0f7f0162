/// The dictionary of one BYTE_ARRAY column chunk: distinct values in first-seen order, already laid out as the
/// PLAIN-encoded dictionary page body, with an open-addressing hash index (no per-value allocation).
struct ByteArrayDictionary: ~Copyable {
    /// One distinct value: where its bytes start in `plain` (after the length prefix), its length, its hash.
    struct Entry {
        var start: Int
        var length: Int
        var hash: UInt32
    }

    /// The dictionary page body: for each entry a u32 LE length, then its bytes.
    private var page = ByteBuffer()
    private var entries = RawArray<Entry>()
    /// Hash slots holding entry index + 1 (0 = empty); the count is a power of two, at most half full.
    private var slots = RawArray<Int32>()
    /// The entry returned last: consecutive rows often repeat a value (the source of a batch, the bundle id and
    /// receipt type of a receipt's transactions, the signer), and one compare is cheaper than a hash.
    private var last = -1

    var count: Int { entries.count }
    var byteSize: Int { page.count }
    /// The PLAIN-encoded dictionary page body.
    var plain: UnsafeRawBufferPointer { page.bytes }

    init() {
        slots.append(0, count: 1024)
    }

    mutating func reset() {
        page.removeAll()
        entries.removeAll()
        slots.fill(0)
        last = -1
    }

    /// The bytes of entry `i`.
    func withEntry<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        precondition(i >= 0 && i < entries.count)
        let e = entries[i]
        return body(UnsafeRawBufferPointer(start: page.base + e.start, count: e.length))  // the entry is whole
    }

    /// The index of `value`, inserting it when new.
    @inline(__always)
    mutating func index(of value: UnsafeRawBufferPointer) -> (index: UInt32, isNew: Bool) {
        if last >= 0 && equals(last, value) { return (UInt32(last), false) }
        return lookUp(value)
    }

    private mutating func lookUp(_ value: UnsafeRawBufferPointer) -> (index: UInt32, isNew: Bool) {
        let h = Self.hash(value)
        let mask = slots.count - 1
        var p = Int(h) & mask
        while true {
            let e = Int(slots[p])  // p <= mask < slots.count
            if e == 0 { break }
            if entries[e - 1].hash == h && equals(e - 1, value) {
                last = e - 1
                return (UInt32(e - 1), false)
            }
            p = (p + 1) & mask
        }
        let index = entries.count
        page.appendLittleEndian(UInt32(truncatingIfNeeded: value.count))
        entries.append(Entry(start: page.count, length: value.count, hash: h))
        page.append(value)
        slots[p] = Int32(truncatingIfNeeded: index + 1)
        last = index
        if entries.count * 2 > slots.count { grow() }
        return (UInt32(index), true)
    }

    @inline(__always)
    private func equals(_ i: Int, _ value: UnsafeRawBufferPointer) -> Bool {
        let e = entries[i]
        guard e.length == value.count else { return false }
        if value.count == 0 { return true }
        // In range: the entry's `length` bytes at `start` were appended whole.
        return bytesEqual(page.base + e.start, value.baseAddress!, value.count)
    }

    private mutating func grow() {
        let n = slots.count * 2
        slots.removeAll()
        slots.append(0, count: n)
        let mask = n - 1
        for i in 0..<entries.count {
            var p = Int(entries[i].hash) & mask
            while slots[p] != 0 { p = (p + 1) & mask }
            slots[p] = Int32(truncatingIfNeeded: i + 1)
        }
    }

    /// Eight bytes per step, multiply-xorshift mixing; the last (partial) word is read overlapping the one before
    /// it instead of byte by byte (the hash only places entries: any function gives the same page).
    static func hash(_ v: UnsafeRawBufferPointer) -> UInt32 {
        let n = v.count
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(n)
        guard let base = v.baseAddress, n > 0 else { return UInt32(truncatingIfNeeded: h) }
        var tail: UInt64
        if n >= 8 {
            var i = 0
            while i + 8 < n {
                // In range: i + 8 < n.
                h = (h ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
                h ^= h >> 29
                i += 8
            }
            tail = base.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)  // n >= 8
        } else if n >= 4 {
            // In range: n >= 4; the two words overlap when n < 8.
            tail =
                UInt64(base.loadUnaligned(as: UInt32.self))
                | UInt64(base.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)) << 32
        } else {
            // n is 1...3: first, middle and last byte (in range: all below n).
            tail =
                UInt64(base.load(as: UInt8.self)) | UInt64(base.load(fromByteOffset: n / 2, as: UInt8.self)) << 8
                | UInt64(base.load(fromByteOffset: n - 1, as: UInt8.self)) << 16
        }
        h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 32
        return UInt32(truncatingIfNeeded: h)
    }
}

/// Whether `n` bytes at `a` and `b` are equal: values of up to 64 bytes word by word (the last word overlapping
/// the one before it), longer ones by memcmp.
@inline(__always)
func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
    if n >= 8 {
        if n > 64 { return memcmpBytes(a, b, n) == 0 }
        var i = 0
        while i + 8 < n {
            // In range: i + 8 < n.
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                != b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            {
                return false
            }
            i += 8
        }
        // In range: n >= 8.
        return a.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            == b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
    }
    if n >= 4 {
        // In range: 4 <= n < 8.
        return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
            && a.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
                == b.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
    }
    var i = 0
    while i < n {
        if a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
        i += 1
    }
    return true
}
