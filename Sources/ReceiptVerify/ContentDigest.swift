import CSIMD
import ReceiptDER

/// The digest of one receipt's signed content (SHA-1 or SHA-256, the SignerInfo's algorithm), computed ahead of
/// `ReceiptVerifier.verify` so that two receipts' digests can be computed together (`ContentHasher.contentDigests`).
///
/// It remembers the buffer it digests (address and length): `verify` takes it only for exactly that buffer and
/// its own algorithm, and otherwise hashes the content itself, so a digest handed to the wrong receipt can cost
/// time but never a wrong verdict.
public struct ContentDigest {
    /// SHA-1 or SHA-256.
    public let algorithm: DigestAlgorithm
    /// The digest in the first `size` bytes (20 or 32); the rest is zero.
    let value: SHA256Digest
    let start: UnsafeRawPointer?
    let count: Int

    init(_ algorithm: DigestAlgorithm, _ value: SHA256Digest, of content: UnsafeRawBufferPointer) {
        self.algorithm = algorithm
        self.value = value
        start = content.baseAddress
        count = content.count
    }

    /// The digest's length in bytes: 20 for SHA-1, 32 for SHA-256.
    public var size: Int { algorithm == .sha1 ? 20 : 32 }

    /// True when this is the digest of `content` (the same buffer) with `algorithm`.
    func matches(_ content: UnsafeRawBufferPointer, _ algorithm: DigestAlgorithm) -> Bool {
        self.algorithm == algorithm && start == content.baseAddress && count == content.count
    }

    /// The digest bytes (`size` of them).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try value.withUnsafeBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[0..<size])) }
    }

    /// Lowercase hex of the digest bytes (allocates; for tests and messages).
    public var hex: String {
        withUnsafeBytes { Hex.string($0) }
    }
}

extension ContentHasher {
    /// The SHA-1 or SHA-256 of one receipt's signed content through OpenSSL; nil for any other algorithm.
    public func contentDigest(_ content: UnsafeRawBufferPointer, _ algorithm: DigestAlgorithm) -> ContentDigest? {
        let md: DigestHandle
        switch algorithm {
        case .sha1: md = Digests.sha1
        case .sha256: md = Digests.sha256
        case .unsupported: return nil
        }
        var value = SHA256Digest()
        let done = value.withUnsafeMutableBytes { out in DigestEngine.digest(md, parts: content, nil, into: out) }
        return done ? ContentDigest(algorithm, value, of: content) : nil
    }

    /// The content digests of two receipts. Two of the same algorithm are computed together with the SHA
    /// extensions when the CPU has them (`twoLane`); a mixed pair, or a CPU without them, gets one OpenSSL call
    /// each. nil for a content whose algorithm is neither SHA-1 nor SHA-256.
    public func contentDigests(
        _ a: UnsafeRawBufferPointer, _ algorithmA: DigestAlgorithm, _ b: UnsafeRawBufferPointer,
        _ algorithmB: DigestAlgorithm
    ) -> (ContentDigest?, ContentDigest?) {
        guard twoLane, algorithmA == algorithmB, algorithmA != .unsupported else {
            return (contentDigest(a, algorithmA), contentDigest(b, algorithmB))
        }
        var da = SHA256Digest()
        var db = SHA256Digest()
        let done = da.withUnsafeMutableBytes { oa in
            db.withUnsafeMutableBytes { ob in
                // Each output holds 32 bytes (a SHA-256 or a SHA-1 digest); the inputs are live buffers of the given
                // lengths (nil only when empty).
                let pa = a.baseAddress?.assumingMemoryBound(to: UInt8.self)
                let pb = b.baseAddress?.assumingMemoryBound(to: UInt8.self)
                let oa = oa.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let ob = ob.baseAddress!.assumingMemoryBound(to: UInt8.self)
                return algorithmA == .sha1
                    ? rf_sha1_x2(pa, a.count, oa, pb, b.count, ob) : rf_sha256_x2(pa, a.count, oa, pb, b.count, ob)
            }
        }
        // 0 only without the SHA extensions, which `twoLane` already ruled out.
        precondition(done == 1, "two-lane SHA refused on a CPU that reported the SHA extensions")
        return (ContentDigest(algorithmA, da, of: a), ContentDigest(algorithmB, db, of: b))
    }
}

/// What to hash for one receipt: its bytes (for `receipt_sha256`), its signed content with the SignerInfo's
/// algorithm (for the signature), or both.
public struct ReceiptDigestInput {
    public var receipt: UnsafeRawBufferPointer?
    public var content: UnsafeRawBufferPointer?
    public var algorithm: DigestAlgorithm

    public init(
        receipt: UnsafeRawBufferPointer?, content: UnsafeRawBufferPointer? = nil,
        algorithm: DigestAlgorithm = .unsupported
    ) {
        self.receipt = receipt
        self.content = content
        self.algorithm = algorithm
    }
}

extension ContentHasher {
    /// The SHA-256 of each receipt and the digest of each signed content (nil where not asked for, or for an
    /// algorithm other than SHA-1 and SHA-256), for up to two receipts.
    ///
    /// With the SHA extensions all of them go through two lanes together (`rf_sha_jobs_x2`: both receipts first,
    /// then both contents; each lane takes the next message when its own is done), so a long receipt is hashed
    /// beside the other messages rather than alone, and a SHA-1 content can run beside a SHA-256 one. Otherwise
    /// OpenSSL hashes each. Allocates nothing.
    public func digests(_ a: ReceiptDigestInput, _ b: ReceiptDigestInput?) -> (
        receipts: (SHA256Digest?, SHA256Digest?), contents: (ContentDigest?, ContentDigest?)
    ) {
        guard twoLane else {
            return (
                (a.receipt.map(sha256), b?.receipt.map(sha256)),
                (contentDigest(of: a), b.flatMap { contentDigest(of: $0) })
            )
        }
        // Job k writes its digest to out[32k..<32k+32]; slot k stays zero when its message is not asked for.
        var out: (SHA256Digest, SHA256Digest, SHA256Digest, SHA256Digest) = (.init(), .init(), .init(), .init())
        let hashA = a.content != nil && a.algorithm != .unsupported
        let hashB = b.map { $0.content != nil && $0.algorithm != .unsupported } ?? false
        withUnsafeMutableBytes(of: &out) { o in
            withUnsafeTemporaryAllocation(of: rf_sha_job.self, capacity: 4) { jobs in
                var n = 0
                // Each buffer is live for the call and read for its own length; each slot holds 32 bytes.
                func add(_ bytes: UnsafeRawBufferPointer, _ slot: Int, sha256: Bool) {
                    jobs[n] = rf_sha_job(
                        data: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count,
                        out: (o.baseAddress! + 32 * slot).assumingMemoryBound(to: UInt8.self), sha256: sha256 ? 1 : 0)
                    n += 1
                }
                if let r = a.receipt { add(r, 0, sha256: true) }
                if let r = b?.receipt { add(r, 1, sha256: true) }
                if hashA, let c = a.content { add(c, 2, sha256: a.algorithm == .sha256) }
                if hashB, let b, let c = b.content { add(c, 3, sha256: b.algorithm == .sha256) }
                let done = rf_sha_jobs_x2(jobs.baseAddress, n)
                // 0 only without the SHA extensions, which `twoLane` already ruled out.
                precondition(done == 1, "two-lane SHA refused on a CPU that reported the SHA extensions")
            }
        }
        return (
            (a.receipt != nil ? out.0 : nil, b?.receipt != nil ? out.1 : nil),
            (
                hashA ? ContentDigest(a.algorithm, out.2, of: a.content!) : nil,
                hashB ? ContentDigest(b!.algorithm, out.3, of: b!.content!) : nil
            )
        )
    }

    private func contentDigest(of input: ReceiptDigestInput) -> ContentDigest? {
        input.content.flatMap { contentDigest($0, input.algorithm) }
    }
}
