import ReceiptModel

/// A bounded, thread-safe map from byte strings to values, for what is learnt once per distinct JWS header (its
/// decoding): a lookup hashes the bytes and compares them with the stored key, without allocating. Entries are
/// never evicted; past `capacity` new keys are not stored (the caller computes their value each time), so hostile
/// input cannot grow memory without bound.
public final class BytesKeyedCache<Value>: @unchecked Sendable {
    public let capacity: Int
    private let lock = Lock()
    /// Guarded by `lock`: entries by the hash of their key.
    private var buckets: [Int: [(key: [UInt8], value: Value)]] = [:]
    private var stored = 0

    public init(capacity: Int) {
        self.capacity = capacity
    }

    /// Distinct keys held.
    public var count: Int { lock.withLock { stored } }

    /// The value for `key`: the stored one, or `make()`'s, stored while there is room. `make` runs under the
    /// cache's lock, so each key's value is made once.
    public func value(for key: UnsafeRawBufferPointer, make: () -> Value) -> Value {
        var hasher = Hasher()
        hasher.combine(bytes: key)
        let h = hasher.finalize()
        return lock.withLock {
            if let bucket = buckets[h], let hit = bucket.first(where: { $0.key.elementsEqual(key) }) {
                return hit.value
            }
            let v = make()
            if stored < capacity {
                buckets[h, default: []].append(([UInt8](key), v))
                stored += 1
            }
            return v
        }
    }
}
