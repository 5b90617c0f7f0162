import Dispatch
import Foundation
import Testing

@testable import ReceiptVerify

/// The bounded digest-keyed table: a key finds only its own value, the oldest entries go first once a shard is
/// full, and nothing is lost or confused when entries move inside the table.
@Suite struct DigestKeyedCacheTests {
    static func key(_ a: UInt64, _ b: UInt64, _ c: UInt64 = 0) -> SHA256Digest {
        var d = SHA256Digest()
        d.words = (a, b, c, ~c)
        return d
    }

    /// The same insertions and lookups against a plain first-in-first-out model of one shard.
    static func checkAgainstModel(keys: [SHA256Digest], limit: Int) {
        let cache = DigestKeyedCache<Int>(capacity: limit, shards: 1)
        var model: [SHA256Digest: Int] = [:]
        var fifo: [SHA256Digest] = []
        for (i, k) in keys.enumerated() {
            let stored = cache.insert(i, for: k)
            if let held = model[k] {
                #expect(stored == held, "insert \(i) must return the value already held")
            } else {
                #expect(stored == i)
                if fifo.count == limit { model[fifo.removeFirst()] = nil }
                fifo.append(k)
                model[k] = i
            }
            #expect(cache.count == model.count)
            // Every key inserted so far finds exactly what the model holds (evicted ones find nothing).
            for probe in keys[...i] {
                #expect(cache.value(for: probe) == model[probe])
            }
        }
    }

    @Test func distinctKeysBeyondTheLimitEvictTheOldestFirst() {
        let keys = (0..<200).map { Self.key(UInt64($0) &* 0x9E37_79B9_7F4A_7C15, UInt64($0) &* 31 + 7) }
        Self.checkAgainstModel(keys: keys, limit: 37)
    }

    @Test func keysSharingTheirHashWordStayReachableThroughEvictions() {
        // Equal second words: the same home slot, so every key lands in one long probe run, which each
        // eviction must close up again.
        let keys = (0..<120).map { Self.key(UInt64($0), 42, UInt64($0)) }
        Self.checkAgainstModel(keys: keys, limit: 23)
    }

    @Test func repeatedKeysKeepTheirFirstValue() {
        var rng = SystemRandomNumberGenerator()
        let pool = (0..<40).map { _ in Self.key(rng.next(), rng.next() % 4, rng.next()) }
        let keys = (0..<300).map { _ in pool[Int(rng.next() % 40)] }
        Self.checkAgainstModel(keys: keys, limit: 16)
    }

    @Test func aSmallTableGrowsUpToItsCapacityAndNoFurther() {
        let cache = DigestKeyedCache<Int>(capacity: 4096, shards: 16)
        for i in 0..<10_000 { cache.insert(i, for: Self.key(UInt64(i), UInt64(i) &* 77)) }
        #expect(cache.count == 4096)
        // The newest entries are held, the oldest are gone.
        #expect(cache.value(for: Self.key(9_999, 9_999 &* 77)) == 9_999)
        #expect(cache.value(for: Self.key(0, 0)) == nil)
    }

    @Test func threadsInsertingTheSameKeysAllSeeOneValuePerKey() {
        let cache = DigestKeyedCache<Int>(capacity: 1024, shards: 16)
        let wrong = NSLock()
        nonisolated(unsafe) var mismatches = 0
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<500 {
                let k = Self.key(UInt64(i), UInt64(i) &* 13)
                let held = cache.insert(i * 10 + t, for: k)
                if held / 10 != i || cache.value(for: k) != held { wrong.withLock { mismatches += 1 } }
            }
        }
        #expect(mismatches == 0)
        #expect(cache.count == 500)
    }
}
