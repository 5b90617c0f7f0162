import COpenSSL
import CSIMD

/// SHA-256 of whole buffers (the `receipt_sha256` column), for one thread.
///
/// Hashes on the stack through OpenSSL's low-level SHA-256 (see `DigestEngine`), so nothing is allocated per
/// receipt. Two buffers at once go through CSIMD's two-lane SHA-256 when the CPU has the SHA extensions: one
/// message is bound by the latency of the round instruction, two interleaved take little more time than one
/// (scripts/sha-x2-bench.c sha256). Stateless; one per worker thread is still the intended use.
public final class ContentHasher {
    /// Whether `sha256Pair` hashes both buffers at once; otherwise one after the other through OpenSSL.
    let twoLane: Bool

    public init() {
        twoLane = rf_sha256_x2_available() != 0
    }

    /// `twoLane: false` keeps pairs on OpenSSL even where the SHA extensions exist (what a CPU without them does).
    init(twoLane: Bool) {
        self.twoLane = twoLane && rf_sha256_x2_available() != 0
    }

    /// The SHA-256 of `bytes`.
    public func sha256(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        var digest = SHA256Digest()
        _ = digest.withUnsafeMutableBytes { out in
            DigestEngine.digest(Digests.sha256, parts: bytes, nil, into: out)
        }
        return digest
    }

    /// The SHA-256 of `a` and of `b`, computed together when the CPU allows.
    public func sha256Pair(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> (SHA256Digest, SHA256Digest) {
        guard twoLane else { return (sha256(a), sha256(b)) }
        var da = SHA256Digest()
        var db = SHA256Digest()
        let done = da.withUnsafeMutableBytes { oa in
            db.withUnsafeMutableBytes { ob in
                // Each output is a 32-byte digest; the inputs are live buffers of the given lengths (nil when empty).
                rf_sha256_x2(
                    a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count,
                    oa.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    b.baseAddress?.assumingMemoryBound(to: UInt8.self), b.count,
                    ob.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        // 0 only without the SHA extensions, which `twoLane` already ruled out.
        precondition(done == 1, "two-lane SHA-256 refused on a CPU that reported the SHA extensions")
        return (da, db)
    }

    /// The SHA-256 of `bytes` as 64 lowercase hex characters written into `out` (at least 64 bytes).
    public func sha256Hex(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        sha256(bytes).writeHex(into: out)
    }

    /// `sha256Hex` of two buffers, computed together when the CPU allows.
    public func sha256HexPair(
        _ a: UnsafeRawBufferPointer, into outA: UnsafeMutableRawBufferPointer, _ b: UnsafeRawBufferPointer,
        into outB: UnsafeMutableRawBufferPointer
    ) {
        let (da, db) = sha256Pair(a, b)
        da.writeHex(into: outA)
        db.writeHex(into: outB)
    }
}

/// The one place that computes a message digest: SHA-1 or SHA-256 of up to two parts.
///
/// Uses OpenSSL's low-level `SHA256_*` / `SHA1_*` functions (through the COpenSSL shim) on a stack context:
/// the same assembly as the EVP path, but OpenSSL 3.0's `EVP_DigestInit_ex2` re-creates the provider context on
/// every init, a heap allocation per receipt per digest (`receiptflow-bench` counts allocations).
enum DigestEngine {
    /// Digests `first` then `second` (when given) into `out`, which has room for `digest.size` bytes.
    /// Returns false for a digest other than SHA-1 and SHA-256 (there is none: `Digests` holds only those).
    @discardableResult
    static func digest(
        _ digest: DigestHandle, parts first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?,
        into out: UnsafeMutableRawBufferPointer
    ) -> Bool {
        precondition(out.count >= digest.size)
        let b = second ?? UnsafeRawBufferPointer(start: nil, count: 0)
        // Both lengths are those of live buffers; `out` was checked to hold digest.size bytes.
        let o = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        switch digest.size {
        case 32: rf_sha256_parts(first.baseAddress, first.count, b.baseAddress, b.count, o)
        case 20: rf_sha1_parts(first.baseAddress, first.count, b.baseAddress, b.count, o)
        default: return false
        }
        return true
    }
}
