/// The slots of `DailyActivity`'s counts by (day, product index): an open-addressing table with linear probing
/// and a mixing hash keyed by a per-process random seed (days come from the input, so that they cannot be chosen
/// to collide), about three times as fast as a `Dictionary` with `Hasher` for these two-integer keys.
struct DailySlots {
    /// One entry: a key and its slot (`slot` < 0: empty), 16 bytes. Product indexes and slots stay far below
    /// 2^31: each takes memory of its own, which the history's budget bounds.
    struct Entry {
        var day: Int64
        var product: Int32
        var slot: Int32
    }

    private static let seed: UInt64 = {
        var h = Hasher()
        h.combine(0x0da1_15)
        return UInt64(bitPattern: Int64(h.finalize()))
    }()

    /// A power of two, at most half used.
    private var entries = [Entry](repeating: Entry(day: 0, product: 0, slot: -1), count: 1 << 10)
    /// Keys held, in the order they were added (slot i holds the i-th key).
    private(set) var keys: [(day: Int64, product: Int)] = []

    var count: Int { keys.count }

    private static func hash(_ day: Int64, _ product: Int) -> Int {
        var x = UInt64(bitPattern: day) ^ seed
        x = (x ^ (x >> 30)) &* 0xbf58_476d_1ce4_e5b9
        x ^= UInt64(truncatingIfNeeded: product) &* 0x94d0_49bb_1331_11eb
        x = (x ^ (x >> 27)) &* 0x94d0_49bb_1331_11eb
        return Int(truncatingIfNeeded: x ^ (x >> 31))
    }

    /// The slot of (`day`, `product`), the next one (`count`) when the key is new.
    mutating func slot(day: Int64, product: Int) -> (slot: Int, isNew: Bool) {
        let mask = entries.count - 1
        var i = Self.hash(day, product) & mask
        while entries[i].slot >= 0 {
            if entries[i].day == day && Int(entries[i].product) == product { return (Int(entries[i].slot), false) }
            i = (i + 1) & mask
        }
        let slot = keys.count
        entries[i] = Entry(day: day, product: Int32(product), slot: Int32(slot))
        keys.append((day, product))
        if keys.count * 2 > entries.count { grow() }
        return (slot, true)
    }

    private mutating func grow() {
        let old = entries
        entries = [Entry](repeating: Entry(day: 0, product: 0, slot: -1), count: old.count * 2)
        let mask = entries.count - 1
        for e in old where e.slot >= 0 {
            var i = Self.hash(e.day, Int(e.product)) & mask
            while entries[i].slot >= 0 { i = (i + 1) & mask }
            entries[i] = e
        }
    }
}
