import ReceiptModel

/// A bounded map from SHA-256 values to shared values, for what worker threads learn once and reuse (chain
/// verdicts, the verdicts on receipts already verified, decoded JWS headers).
///
/// Sharded: the key's first word picks one of `shards` tables, each under its own pthread `Lock` (which
/// ThreadSanitizer sees), so threads working on different keys rarely meet on one lock. A lock is held only to
/// read or store an entry, never while a value is computed. Each shard holds at most `capacity / shards` entries
/// and, when full, evicts its oldest entry (first in, first out): memory stays bounded whatever the input.
///
/// Each shard is one open-addressing table (linear probing, at most half full) whose slots hold the key and the
/// value side by side, so a lookup reads one slot; the slot is picked by the seeded standard `Hasher` over the key,
/// so keys chosen by an input cannot be made to crowd one part of a table.
public final class DigestKeyedCache<Value>: @unchecked Sendable {
    /// The most entries held at once.
    public let capacity: Int
    private let shards: [Shard]

    private struct Slot {
        let key: SHA256Digest
        let value: Value
    }

    private final class Shard {
        let lock = Lock()
        /// Guarded by `lock`: the table, a power of two long, grown by doubling up to `maxSlots` (a small run
        /// holds little).
        var slots: [Slot?] = Array(repeating: nil, count: 16)
        /// Guarded by `lock`: the keys in insertion order, as a ring of `limit` slots; `next` is the oldest once
        /// the ring is full.
        var order: [SHA256Digest] = []
        var next = 0
        let limit: Int
        let maxSlots: Int

        init(limit: Int) {
            self.limit = limit
            var n = 16
            while n < 2 * limit { n *= 2 }
            maxSlots = n
        }

        var mask: Int { slots.count - 1 }

        static func home(_ key: SHA256Digest, _ mask: Int) -> Int {
            var h = Hasher()
            h.combine(key.words.1)
            return h.finalize() & mask
        }

        /// The slot holding `key`, if any.
        func find(_ key: SHA256Digest) -> Int? {
            let mask = mask
            var i = Self.home(key, mask)
            while let held = slots[i]?.key {
                if held == key { return i }
                i = (i + 1) & mask
            }
            return nil
        }

        /// Stores a key known to be absent; the table has room.
        func place(_ slot: Slot) {
            let mask = mask
            var i = Self.home(slot.key, mask)
            while slots[i] != nil { i = (i + 1) & mask }
            slots[i] = slot
        }

        /// Empties slot `i` and moves later entries of its probe run back, so that every entry stays reachable
        /// from its home slot (deletion without tombstones).
        func remove(at index: Int) {
            let mask = mask
            var hole = index
            slots[hole] = nil
            var i = (hole + 1) & mask
            while let key = slots[i]?.key {
                let home = Self.home(key, mask)
                // The entry may fill the hole unless its home lies cyclically in (hole, i].
                let homeAfterHole = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i)
                if !homeAfterHole {
                    slots[hole] = slots[i]
                    slots[i] = nil
                    hole = i
                }
                i = (i + 1) & mask
            }
        }

        /// Doubles the table when one more entry would fill more than half of it.
        func growIfNeeded() {
            guard 2 * (order.count + 1) > slots.count, slots.count < maxSlots else { return }
            let old = slots
            slots = Array(repeating: nil, count: slots.count * 2)
            for case let slot? in old { place(slot) }
        }
    }

    /// - Parameters:
    ///   - capacity: the most entries held (at least one per shard).
    ///   - shards: the number of independently locked parts, a power of two.
    public init(capacity: Int, shards: Int) {
        precondition(shards > 0 && shards & (shards - 1) == 0, "shards must be a power of two")
        let perShard = max(1, capacity / shards)
        self.capacity = perShard * shards
        self.shards = (0..<shards).map { _ in Shard(limit: perShard) }
    }

    private func shard(_ key: SHA256Digest) -> Shard {
        shards[Int(truncatingIfNeeded: key.words.0) & (shards.count - 1)]
    }

    /// The value stored for `key`, if any.
    public func value(for key: SHA256Digest) -> Value? {
        let s = shard(key)
        return s.lock.withLock { s.find(key).flatMap { s.slots[$0]?.value } }
    }

    /// Stores `value` for `key` unless a value is there already (another thread stored it first); returns the
    /// value now held. Evicts the shard's oldest entry when the shard is full.
    @discardableResult
    public func insert(_ value: Value, for key: SHA256Digest) -> Value {
        let s = shard(key)
        return s.lock.withLock {
            if let i = s.find(key), let held = s.slots[i]?.value { return held }
            if s.order.count < s.limit {
                s.growIfNeeded()
                s.order.append(key)
            } else {
                if let oldest = s.find(s.order[s.next]) { s.remove(at: oldest) }
                s.order[s.next] = key
                s.next = (s.next + 1) % s.limit
            }
            s.place(Slot(key: key, value: value))
            return value
        }
    }

    /// Entries held.
    public var count: Int { shards.reduce(0) { n, s in n + s.lock.withLock { s.order.count } } }
}
