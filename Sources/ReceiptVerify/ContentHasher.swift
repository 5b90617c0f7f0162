import COpenSSL

/// SHA-256 of whole buffers (the `receipt_sha256` column), for one thread.
///
/// Owns one `EVP_MD_CTX` that is re-initialised for every buffer, so no context is created per receipt.
/// Not thread-safe: make one per worker thread.
public final class ContentHasher {
    private let ctx: OpaquePointer

    public init() {
        // Allocation failure of a few hundred bytes at startup is not recoverable.
        guard let ctx = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed") }
        self.ctx = ctx
    }

    deinit { EVP_MD_CTX_free(ctx) }

    /// The SHA-256 of `bytes`.
    public func sha256(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        var digest = SHA256Digest()
        _ = digest.withUnsafeMutableBytes { out in
            DigestEngine.digest(ctx, Digests.sha256, parts: bytes, nil, into: out)
        }
        return digest
    }

    /// The SHA-256 of `bytes` as 64 lowercase hex characters written into `out` (at least 64 bytes).
    public func sha256Hex(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        sha256(bytes).writeHex(into: out)
    }
}

/// The one place that drives an `EVP_MD_CTX`: init with a prefetched digest, feed up to two parts, finish.
enum DigestEngine {
    /// Digests `first` then `second` (when given) into `out`, which has room for `digest.size` bytes.
    /// Returns false when OpenSSL fails (it does not for these digests; checked anyway).
    @discardableResult
    static func digest(
        _ ctx: OpaquePointer, _ digest: DigestHandle, parts first: UnsafeRawBufferPointer,
        _ second: UnsafeRawBufferPointer?, into out: UnsafeMutableRawBufferPointer
    ) -> Bool {
        precondition(out.count >= digest.size)
        guard EVP_DigestInit_ex2(ctx, digest.md, nil) == 1 else { return false }
        if first.count > 0, EVP_DigestUpdate(ctx, first.baseAddress, first.count) != 1 { return false }
        if let second, second.count > 0, EVP_DigestUpdate(ctx, second.baseAddress, second.count) != 1 {
            return false
        }
        var len: UInt32 = 0
        return EVP_DigestFinal_ex(ctx, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &len) == 1
    }
}
