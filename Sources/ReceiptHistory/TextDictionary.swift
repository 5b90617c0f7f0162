/// Byte strings numbered in the order they are first seen, each held once: the compact purchase table codes the
/// strings that many purchases share (bundle and product ids) by their number.
///
/// Numbers depend only on the order strings are added, never on hashing, so what the table holds is the same in
/// every process. An open-addressing index of slots (at most half used) finds a string from its hash; a hit is
/// confirmed by comparing the bytes.
struct TextDictionary {
    /// Every string's bytes, one after the other.
    private var pool: [UInt8] = []
    /// Where string n starts in `pool`; `starts[n + 1]` is where it ends (empty while there is no string).
    private var starts: [Int32] = []
    /// Each string's hash, by number.
    private var hashes: [Int] = []
    /// Number + 1 (0: empty); the count is a power of two (none until the first string: an empty dictionary
    /// allocates nothing).
    private var slots: [Int32] = []
    /// The number each of a few callers' fields was given last (-1: none), tried before the index: a field
    /// mostly repeats its last string (a receipt's bundle id, a subscription's product id).
    private var recent: [Int] = []

    var count: Int { hashes.count }

    /// Memory held, about.
    var bytes: Int { pool.capacity + starts.capacity * 4 + hashes.capacity * 8 + slots.count * 4 }

    /// The number of `b`, added when new.
    mutating func code(_ b: UnsafeRawBufferPointer) -> Int {
        if slots.isEmpty {
            slots = [Int32](repeating: 0, count: 64)
            starts = [0]
        }
        var hasher = Hasher()
        hasher.combine(bytes: b)
        let h = hasher.finalize()
        let mask = slots.count - 1
        var s = h & mask
        while slots[s] != 0 {
            let n = Int(slots[s]) - 1
            if hashes[n] == h && holds(b, at: n) { return n }
            s = (s + 1) & mask
        }
        let n = hashes.count
        pool.append(contentsOf: b)
        starts.append(Int32(pool.count))
        hashes.append(h)
        slots[s] = Int32(n + 1)
        if hashes.count * 2 > slots.count { grow() }
        return n
    }

    /// The number of `b`, for the caller's field `field` (0 to 7): the field's last number when it holds the same
    /// bytes, else as `code(_:)`.
    @inline(__always)
    mutating func code(_ b: UnsafeRawBufferPointer, field: Int) -> Int {
        if recent.isEmpty { recent = [Int](repeating: -1, count: 8) }
        let last = recent[field]
        if last >= 0 && holds(b, at: last) { return last }
        let n = code(b)
        recent[field] = n
        return n
    }

    /// Whether string `n` holds the bytes `b`.
    func holds(_ b: UnsafeRawBufferPointer, at n: Int) -> Bool {
        let start = Int(starts[n])
        let end = Int(starts[n + 1])
        guard end - start == b.count else { return false }
        return pool.withUnsafeBytes { equalBytes($0.span(start, end - start), b) }
    }

    /// Appends string `n` to `out`; false when there is no string `n` (a damaged record).
    func append(_ n: Int, to out: inout [UInt8]) -> Bool {
        guard n >= 0 && n < hashes.count else { return false }
        let start = Int(starts[n])
        let end = Int(starts[n + 1])
        pool.withUnsafeBytes { out.append(contentsOf: $0.span(start, end - start)) }
        return true
    }

    /// Forgets every string (their numbers with them), keeping the storage.
    mutating func removeAll() {
        pool.removeAll(keepingCapacity: true)
        if !starts.isEmpty { starts.removeSubrange(1...) }
        hashes.removeAll(keepingCapacity: true)
        for i in recent.indices { recent[i] = -1 }
        slots.withUnsafeMutableBufferPointer { s in
            for i in s.indices { s[i] = 0 }
        }
    }

    private mutating func grow() {
        slots = [Int32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (n, h) in hashes.enumerated() {
            var s = h & mask
            while slots[s] != 0 { s = (s + 1) & mask }
            slots[s] = Int32(n + 1)
        }
    }
}
