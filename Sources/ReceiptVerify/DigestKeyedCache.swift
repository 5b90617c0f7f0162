import ReceiptModel

/// A bounded map from SHA-256 values to shared values, for what worker threads learn once and reuse (chain
/// verdicts, the verdicts on receipts already verified, decoded JWS headers).
///
/// Sharded: the key's first word picks one of `shards` dictionaries, each under its own pthread `Lock` (which
/// ThreadSanitizer sees), so threads working on different keys rarely meet on one lock. A lock is held only to
/// read or store an entry, never while a value is computed. Each shard holds at most `capacity / shards` entries
/// and, when full, evicts its oldest entry (first in, first out): memory stays bounded whatever the input.
/// Keys are SHA-256 values of the bytes they stand for, so a hostile input cannot make them collide.
public final class DigestKeyedCache<Value>: @unchecked Sendable {
    /// The most entries held at once.
    public let capacity: Int
    private let shards: [Shard]

    private final class Shard {
        let lock = Lock()
        /// Guarded by `lock`.
        var entries: [SHA256Digest: Value] = [:]
        /// Guarded by `lock`: the keys in insertion order, as a ring of `limit` slots; `next` is the oldest once
        /// the ring is full.
        var order: [SHA256Digest] = []
        var next = 0
        let limit: Int

        /// The tables grow with use, up to `limit` entries: a small run holds little.
        init(limit: Int) { self.limit = limit }
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
        return s.lock.withLock { s.entries[key] }
    }

    /// Stores `value` for `key` unless a value is there already (another thread stored it first); returns the
    /// value now held. Evicts the shard's oldest entry when the shard is full.
    @discardableResult
    public func insert(_ value: Value, for key: SHA256Digest) -> Value {
        let s = shard(key)
        return s.lock.withLock {
            if let held = s.entries[key] { return held }
            if s.order.count < s.limit {
                s.order.append(key)
            } else {
                s.entries[s.order[s.next]] = nil
                s.order[s.next] = key
                s.next = (s.next + 1) % s.limit
            }
            s.entries[key] = value
            return value
        }
    }

    /// Entries held.
    public var count: Int { shards.reduce(0) { n, s in n + s.lock.withLock { s.entries.count } } }
}
