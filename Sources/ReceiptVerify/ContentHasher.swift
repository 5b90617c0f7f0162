import COpenSSL
import ReceiptDER

/// The one place that computes message digests (SHA-1 and SHA-256): OpenSSL's EVP interface, one digest per
/// message, on an `EVP_MD_CTX` kept for the life of the hasher.
///
/// Not thread-safe: one per worker thread (each `ReceiptVerifier`, `ReceiptEvaluator` and `RecordProcessor` owns
/// one). OpenSSL 3.0 re-creates the provider's digest state on every `EVP_DigestInit_ex2`, one small heap
/// allocation per digest; the context itself is allocated once.
public final class ContentHasher {
    /// Owned; freed in deinit.
    let ctx: OpaquePointer

    public init() {
        guard let ctx = EVP_MD_CTX_new() else { fatalError("OpenSSL could not allocate a digest context") }
        self.ctx = ctx
    }

    deinit { EVP_MD_CTX_free(ctx) }

    /// The SHA-256 of `bytes`.
    public func sha256(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        var digest = SHA256Digest()
        // SHA-256 is always available (`Digests`); a failure here is OpenSSL running out of memory.
        let done = digest.withUnsafeMutableBytes { out in self.digest(Digests.sha256, bytes, into: out) }
        precondition(done, "OpenSSL could not compute a SHA-256")
        return digest
    }

    /// The SHA-256 of `bytes`, for callers shared by threads that hold no hasher of their own (OpenSSL's
    /// one-shot `EVP_Digest`, which makes its own context).
    public static func sha256(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        var digest = SHA256Digest()
        var length: UInt32 = 0
        let done = digest.withUnsafeMutableBytes { out in
            EVP_Digest(
                bytes.baseAddress, bytes.count, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &length,
                Digests.sha256.md, nil) == 1
        }
        ERR_clear_error()
        // SHA-256 is always available (`Digests`); a failure here is OpenSSL running out of memory.
        precondition(done && length == 32, "OpenSSL could not compute a SHA-256")
        return digest
    }

    /// The SHA-256 of `bytes` as 64 lowercase hex characters written into `out` (at least 64 bytes).
    public func sha256Hex(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        sha256(bytes).writeHex(into: out)
    }

    /// The digest with `md` of one message given in up to three consecutive parts, into `out` (room for
    /// `md.size` bytes); false when OpenSSL fails.
    func digest(
        _ md: DigestHandle, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer? = nil,
        _ third: UnsafeRawBufferPointer? = nil, into out: UnsafeMutableRawBufferPointer
    ) -> Bool {
        precondition(out.count >= md.size, "a digest needs room for its size")
        func update(_ part: UnsafeRawBufferPointer?) -> Bool {
            guard let part, part.count > 0 else { return true }
            return EVP_DigestUpdate(ctx, part.baseAddress, part.count) == 1
        }
        var length: UInt32 = 0
        // `out` holds at least md.size bytes, the most this digest writes.
        let done =
            EVP_DigestInit_ex2(ctx, md.md, nil) == 1 && update(first) && update(second) && update(third)
            && EVP_DigestFinal_ex(ctx, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &length) == 1
            && Int(length) == md.size
        // Only a failed call leaves entries on this thread's error queue (clearing it costs a thread-local look-up
        // and a walk of the whole queue, per message).
        if !done { ERR_clear_error() }
        return done
    }

    /// The SHA-1 or SHA-256 of `bytes` (the SignerInfo's `algorithm`) in the first 20 or 32 bytes of the result;
    /// nil for any other algorithm, or when OpenSSL fails.
    public func digest(_ algorithm: DigestAlgorithm, _ bytes: UnsafeRawBufferPointer) -> SHA256Digest? {
        guard let md = Digests.handle(algorithm) else { return nil }
        var value = SHA256Digest()
        let done = value.withUnsafeMutableBytes { out in digest(md, bytes, into: out) }
        return done ? value : nil
    }
}

extension Digests {
    /// The handle for a SignerInfo's digest algorithm; nil for one other than SHA-1 and SHA-256.
    static func handle(_ algorithm: DigestAlgorithm) -> DigestHandle? {
        switch algorithm {
        case .sha1: return sha1
        case .sha256: return sha256
        case .unsupported: return nil
        }
    }
}

extension ContentHasher {
    /// The SHA-256 of a sequence of byte strings, each preceded by its length as 8 bytes (so two different
    /// sequences never make the same message). `feed` passes each string, in order, to the function it is given.
    func sha256(framing feed: ((UnsafeRawBufferPointer) -> Void) -> Void) -> SHA256Digest {
        var ok = EVP_DigestInit_ex2(ctx, Digests.sha256.md, nil) == 1
        feed { part in
            var length = UInt64(part.count).littleEndian
            ok = ok && withUnsafeBytes(of: &length) { EVP_DigestUpdate(ctx, $0.baseAddress, 8) == 1 }
            if part.count > 0 { ok = ok && EVP_DigestUpdate(ctx, part.baseAddress, part.count) == 1 }
        }
        var digest = SHA256Digest()
        var length: UInt32 = 0
        digest.withUnsafeMutableBytes { out in
            ok = ok && EVP_DigestFinal_ex(ctx, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &length) == 1
        }
        ERR_clear_error()
        // SHA-256 is always available (`Digests`); a failure here is OpenSSL running out of memory.
        precondition(ok && length == 32, "OpenSSL could not compute a SHA-256")
        return digest
    }
}
