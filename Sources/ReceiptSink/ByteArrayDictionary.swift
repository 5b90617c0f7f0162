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
    }

    /// The bytes of entry `i`.
    func withEntry<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let s = Int(starts[i])
        let n = Int(lengths[i])
        return plain.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[s..<(s + n)])) }
    }

    /// The index of `value`, inserting it when new.
    mutating func index(of value: UnsafeRawBufferPointer) -> (index: UInt32, isNew: Bool) {
        let h = Self.hash(value)
        let mask = slots.count - 1
        var p = Int(h) & mask
        while true {
            let e = Int(slots[p])
            if e == 0 { break }
            if hashes[e - 1] == h && equals(e - 1, value) { return (UInt32(e - 1), false) }
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

    /// FNV-1a: short keys, no need for more.
    static func hash(_ v: UnsafeRawBufferPointer) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for b in v {
            h = (h ^ UInt32(b)) &* 16_777_619
        }
        return h
    }
}
