import ReceiptDER
import ReceiptModel
import Synchronization

/// Chain verdicts shared by all worker threads, keyed by the SHA-256 of a receipt's embedded certificates and
/// signer identifier (`ChainKey`), and the verdicts on receipts already verified in this run (`signatures`).
///
/// Both are `DigestKeyedCache`s: sharded dictionaries under pthread locks, bounded, evicting their oldest
/// entries. A miss builds the chain's entry (OpenSSL's chain verification) with no lock held, so a slow or
/// hostile chain never makes workers checking other chains wait; two workers missing the same chain at once
/// both verify it, and the first to store it wins.
///
/// Memory: at most `capacity` chains (each holds its certificates' bytes, a few kilobytes for Apple's) and
/// `ReceiptVerdicts.defaultCapacity` receipt verdicts (under 100 bytes each).
public final class ChainCache: @unchecked Sendable {
    /// The anchors every verdict in this cache was reached against.
    public let anchors: TrustAnchors
    /// The most chains held at once.
    public let capacity: Int
    /// The verdicts on whole receipts already verified, by the SHA-256 of their bytes.
    let signatures: ReceiptVerdicts

    private let chains: DigestKeyedCache<ChainEntry>
    /// Builds the entry of a chain not yet held: `ChainBuilder.build`, replaced only by tests.
    private let build: ChainBuilder.Build
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)
    private let nextID = Atomic<UInt64>(1)

    /// - Parameters:
    ///   - capacity: the most distinct chains held (each a signer identifier and its certificates).
    ///   - receiptVerdicts: the most verdicts on whole receipts held.
    public convenience init(
        anchors: TrustAnchors, capacity: Int = 4096, receiptVerdicts: Int = ReceiptVerdicts.defaultCapacity
    ) {
        self.init(anchors: anchors, capacity: capacity, receiptVerdicts: receiptVerdicts, build: ChainBuilder.build)
    }

    /// - Parameter build: makes the entry of a chain not yet held.
    init(
        anchors: TrustAnchors, capacity: Int, receiptVerdicts: Int, build: @escaping ChainBuilder.Build
    ) {
        self.anchors = anchors
        chains = DigestKeyedCache(capacity: capacity, shards: capacity >= 256 ? 16 : 1)
        self.capacity = chains.capacity
        signatures = ReceiptVerdicts(capacity: receiptVerdicts)
        self.build = build
    }

    /// Receipts whose chain verdict came from the cache (or from a worker's own recent chains).
    public var hits: Int { hitCount.load(ordering: .relaxed) }
    /// Chain verifications run (a chain verified by two workers at once counts twice).
    public var misses: Int { missCount.load(ordering: .relaxed) }
    /// Distinct chains held.
    public var count: Int { chains.count }

    /// Counts a chain verdict a worker found among its own recent chains.
    func noteHit() { hitCount.wrappingAdd(1, ordering: .relaxed) }

    /// The entry held under `key`, if any (no hit or miss counted).
    func entry(key: SHA256Digest) -> ChainEntry? { chains.value(for: key) }

    /// The entry for `der`'s certificates and signer identifier: from the cache, or built (without any lock
    /// held) and stored. The caller has checked that every range lies inside `der`.
    func entry(_ der: UnsafeRawBufferPointer, container: borrowing SignedDataView, hasher: ContentHasher) -> ChainEntry
    {
        let certs = container.certificates
        let issuer = container.signerIssuer
        let serial = container.signerSerial
        let key = ChainKey.digest(der, certificates: certs, issuer: issuer, serial: serial, hasher: hasher)
        if let e = chains.value(for: key) {
            hitCount.wrappingAdd(1, ordering: .relaxed)
            return e
        }
        missCount.wrappingAdd(1, ordering: .relaxed)
        let built = build(
            ChainBuilder.Request(
                id: nextID.wrappingAdd(1, ordering: .relaxed).oldValue, key: key, der: der, certificates: certs,
                issuer: issuer, serial: serial, anchors: anchors))
        return chains.insert(built, for: key)
    }
}
