import COpenSSL

/// SHA-256 of whole buffers (the `receipt_sha256` column), for one thread.
///
/// Hashes on the stack through OpenSSL's low-level SHA-256 (see `DigestEngine`), so nothing is allocated per
/// receipt. Stateless; one per worker thread is still the intended use.
public final class ContentHasher {
    public init() {}

    /// The SHA-256 of `bytes`.
    public func sha256(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        var digest = SHA256Digest()
        _ = digest.withUnsafeMutableBytes { out in
            DigestEngine.digest(Digests.sha256, parts: bytes, nil, into: out)
        }
        return digest
    }

    /// The SHA-256 of `bytes` as 64 lowercase hex characters written into `out` (at least 64 bytes).
    public func sha256Hex(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        sha256(bytes).writeHex(into: out)
    }
}

/// The one place that computes a message digest: SHA-1 or SHA-256 of up to two parts.
///
/// Uses OpenSSL's low-level `SHA256_*` / `SHA1_*` functions (through the COpenSSL shim) on a stack context:
/// the same assembly as the EVP path, but OpenSSL 3.0's `EVP_DigestInit_ex2` re-creates the provider context on
/// every init, a heap allocation per receipt per digest (measured by `receiptflow-bench`).
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
