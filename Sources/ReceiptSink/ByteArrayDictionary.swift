/// The dictionary of one BYTE_ARRAY column chunk: distinct values in first-seen order, already laid out as the
/// PLAIN-encoded dictionary page body, with an open-addressing hash index (no per-value allocation).
struct ByteArrayDictionary {
    /// The dictionary page body: for each entry a u32 LE length, then its bytes.
    private(set) var plain: [UInt8] = []
    /// Start of each entry's bytes (after its length prefix) in `plain`.
    private var starts: [Int32] = []
    private var lengths: [Int32] = []
    /// Hash slots holding entry index + 1 (0 = empty); the count is a power of two, at most half full.
    private var slots: [Int32] = []
    private var hashes: [UInt32] = []
    /// The entry returned last: consecutive rows often repeat a value (the source of a batch, the bundle id and
    /// receipt type of a receipt's transactions, the signer), and one compare is cheaper than a hash.
    private var last = -1

    var count: Int { starts.count }
    var byteSize: Int { plain.count }

    init() {
        slots = [Int32](repeating: 0, count: 1024)
    }

    /// An empty value that holds no storage and must not be used (a stand-in while the real one is swapped out).
    init(placeholder: Void) {}

    mutating func reset() {
        plain.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        hashes.removeAll(keepingCapacity: true)
        for i in slots.indices { slots[i] = 0 }
        last = -1
    }

    /// The bytes of entry `i`.
    func withEntry<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let s = Int(starts[i])
        let n = Int(lengths[i])
        return plain.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[s..<(s + n)])) }
    }

    /// The index of `value`, inserting it when new.
    mutating func index(of value: UnsafeRawBufferPointer) -> (index: UInt32, isNew: Bool) {
        if last >= 0 && equals(last, value) { return (UInt32(last), false) }
        let h = Self.hash(value)
        let mask = slots.count - 1
        var p = Int(h) & mask
        while true {
            let e = Int(slots[p])
            if e == 0 { break }
            if hashes[e - 1] == h && equals(e - 1, value) {
                last = e - 1
                return (UInt32(e - 1), false)
            }
            p = (p + 1) & mask
        }
        let index = starts.count
        var len = UInt32(value.count).littleEndian
        withUnsafeBytes(of: &len) { plain.append(contentsOf: $0) }
        starts.append(Int32(truncatingIfNeeded: plain.count))
        lengths.append(Int32(truncatingIfNeeded: value.count))
        plain.append(contentsOf: value)
        hashes.append(h)
        slots[p] = Int32(truncatingIfNeeded: index + 1)
        last = index
        if starts.count * 2 > slots.count { grow() }
        return (UInt32(index), true)
    }

    private func equals(_ i: Int, _ value: UnsafeRawBufferPointer) -> Bool {
        guard Int(lengths[i]) == value.count else { return false }
        if value.count == 0 { return true }
        let s = Int(starts[i])
        return plain.withUnsafeBytes { p in
            // s + count <= plain.count: the entry was appended whole.
            memcmpBytes(p.baseAddress! + s, value.baseAddress!, value.count) == 0
        }
    }

    private mutating func grow() {
        let n = slots.count * 2
        slots = [Int32](repeating: 0, count: n)
        let mask = n - 1
        for i in 0..<starts.count {
            var p = Int(hashes[i]) & mask
            while slots[p] != 0 { p = (p + 1) & mask }
            slots[p] = Int32(truncatingIfNeeded: i + 1)
        }
    }

    /// Eight bytes per step, multiply-xorshift mixing (FNV-1a byte by byte cost a tenth of the writer's time).
    static func hash(_ v: UnsafeRawBufferPointer) -> UInt32 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(v.count)
        var i = 0
        let n = v.count
        guard let base = v.baseAddress else { return UInt32(truncatingIfNeeded: h) }
        while i + 8 <= n {
            // In range: i + 8 <= n.
            h = (h ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < n {
            tail |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift
            shift += 8
            i += 1
        }
        h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 32
        return UInt32(truncatingIfNeeded: h)
    }
}
