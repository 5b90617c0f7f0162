import ReceiptDER
import ReceiptModel
import Synchronization

/// Chain verdicts shared by all worker threads, keyed by the exact bytes of a receipt's embedded certificates
/// and its signer identifier.
///
/// Read-mostly: a hit is a hash, an atomic load and a byte comparison, with no lock and no allocation; only a
/// miss takes the lock (and runs the OpenSSL chain verification under it). The table has a fixed number of
/// slots and entries are never evicted, so a hostile stream of distinct certificates cannot grow memory
/// without bound: past `capacity`, verdicts are computed per receipt instead of cached.
public final class ChainCache: @unchecked Sendable {
    /// The anchors every verdict in this cache was reached against.
    public let anchors: TrustAnchors
    /// Number of slots (a power of two).
    public let capacity: Int

    /// Slot i holds 0 (empty) or the bits of an unretained `ChainEntry` kept alive by `entries`.
    /// Published with release ordering after the entry is fully built; readers load with acquire ordering.
    private let slots: UnsafeMutablePointer<Atomic<Int>>
    private let lock = Lock()
    /// Owns every published entry (the slots hold them unretained). Guarded by `lock`.
    private var entries: [ChainEntry] = []
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)
    private let nextID = Atomic<UInt64>(1)

    /// Linear probing stops after this many slots; a key that finds no free slot is not cached.
    private static let maxProbe = 8

    /// - Parameter capacity: slots in the table, rounded up to a power of two (each holds one chain).
    public init(anchors: TrustAnchors, capacity: Int = 4096) {
        self.anchors = anchors
        var c = 16
        while c < capacity { c <<= 1 }
        self.capacity = c
        slots = .allocate(capacity: c)
        for i in 0..<c { (slots + i).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Receipts whose chain verdict came from the cache.
    public var hits: Int { hitCount.load(ordering: .relaxed) }
    /// Receipts that needed a chain verification (including those whose verdict could not be cached).
    public var misses: Int { missCount.load(ordering: .relaxed) }
    /// Distinct chains held.
    public var count: Int { lock.withLock { entries.count } }

    /// The entry for `der`'s certificates and signer identifier: from the table, or built and inserted.
    /// The caller has checked that every range lies inside `der`.
    func entry(_ der: UnsafeRawBufferPointer, container: borrowing SignedDataView) -> ChainEntry {
        let certs = container.certificates
        let issuer = container.signerIssuer
        let serial = container.signerSerial
        let h = ChainKey.hash(der, certificates: certs, issuer: issuer, serial: serial)
        if let e = lookup(h, der, certs, issuer, serial) {
            hitCount.wrappingAdd(1, ordering: .relaxed)
            return e
        }
        return lock.withLock { () -> ChainEntry in
            // Another thread may have inserted it while this one waited for the lock.
            if let e = lookup(h, der, certs, issuer, serial) {
                hitCount.wrappingAdd(1, ordering: .relaxed)
                return e
            }
            missCount.wrappingAdd(1, ordering: .relaxed)
            let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
            let mask = capacity - 1
            // Only this (locked) path writes slots, so the free slot found here stays free until the store below.
            let free = (0..<Self.maxProbe).lazy.map { Int(truncatingIfNeeded: h &+ UInt64($0)) & mask }
                .first { slots[$0].load(ordering: .relaxed) == 0 }
            let e = ChainBuilder.build(
                id: id, keyHash: h, cached: free != nil, der: der, certificates: certs, issuer: issuer,
                serial: serial, anchors: anchors)
            if let free {
                entries.append(e)
                slots[free].store(Int(bitPattern: Unmanaged.passUnretained(e).toOpaque()), ordering: .releasing)
            }
            return e
        }
    }

    /// The published entry for this key, if any.
    private func lookup(
        _ h: UInt64, _ der: UnsafeRawBufferPointer, _ certs: [Range<Int>], _ issuer: Range<Int>, _ serial: Range<Int>
    ) -> ChainEntry? {
        let mask = capacity - 1
        for probe in 0..<Self.maxProbe {
            let i = Int(truncatingIfNeeded: h &+ UInt64(probe)) & mask
            let bits = slots[i].load(ordering: .acquiring)
            // Slots fill in probe order and are never cleared, so an empty slot ends the search.
            guard let p = UnsafeRawPointer(bitPattern: bits) else { return nil }
            // Entries in slots are retained by `entries` until the cache itself is freed.
            let e = Unmanaged<ChainEntry>.fromOpaque(p).takeUnretainedValue()
            if e.keyHash == h, e.matches(der, certificates: certs, issuer: issuer, serial: serial) { return e }
        }
        return nil
    }
}
