import COpenSSL
import ReceiptDER

/// RSASSA-PKCS1-v1_5 verification (RFC 8017 section 8.2.2) by OpenSSL: `EVP_PKEY_verify` over the digest the
/// verifier computed. OpenSSL does the modular arithmetic, rebuilds the expected encoding (the DigestInfo with NULL
/// parameters) and compares it with everything after the padding; it also rejects a signature that is not exactly
/// the modulus length or not below the modulus.
///
/// One per `ReceiptVerifier`, so one per worker thread (an `EVP_PKEY_CTX` must not be shared). It keeps one
/// initialised context per digest algorithm for the last key it saw: receipts signed by the same key skip
/// `EVP_PKEY_CTX_new`, `EVP_PKEY_verify_init` and the digest setting. A kept context holds a reference to its key
/// (`EVP_PKEY_CTX_new_from_pkey` takes one), so the key cannot be freed and its address reused while the context
/// is kept: comparing key pointers is enough to know the context is the right one.
final class PKCS1Verifier {
    /// A verification context, initialised for `key` and one digest algorithm.
    private struct Kept {
        var key: OpaquePointer? = nil
        var ctx: OpaquePointer? = nil
    }
    private var sha1 = Kept()
    private var sha256 = Kept()

    init() {}

    deinit {
        EVP_PKEY_CTX_free(sha1.ctx)
        EVP_PKEY_CTX_free(sha256.ctx)
    }

    /// True when `signature` is `key`'s PKCS #1 v1.5 signature of `digest` made with `algorithm`.
    ///
    /// - Parameters:
    ///   - key: an RSA `EVP_PKEY`, shared read-only between threads.
    ///   - digest: exactly the algorithm's digest length in bytes.
    func verify(
        _ key: OpaquePointer, signature: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer,
        algorithm: DigestAlgorithm
    ) -> Bool {
        let md: DigestHandle
        switch algorithm {
        case .sha1: md = Digests.sha1
        case .sha256: md = Digests.sha256
        case .unsupported: return false
        }
        guard digest.count == md.size,
            let ctx = algorithm == .sha1 ? context(&sha1, key, md) : context(&sha256, key, md)
        else {
            ERR_clear_error()
            return false
        }
        let verified =
            EVP_PKEY_verify(
                ctx, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
                digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count) == 1
        // A signature that does not match leaves OpenSSL's reasons on this thread's error queue; a match leaves none.
        if !verified { ERR_clear_error() }
        return verified
    }

    /// The kept context for `key` and `md`, made (and the previous one freed) when the key changed; nil when
    /// OpenSSL cannot make one (not an RSA key, out of memory).
    private func context(_ kept: inout Kept, _ key: OpaquePointer, _ md: DigestHandle) -> OpaquePointer? {
        if kept.key == key, let ctx = kept.ctx { return ctx }
        EVP_PKEY_CTX_free(kept.ctx)
        kept = Kept()
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
        guard EVP_PKEY_verify_init(ctx) == 1, EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1,
            EVP_PKEY_CTX_set_signature_md(ctx, md.md) == 1
        else {
            EVP_PKEY_CTX_free(ctx)
            return nil
        }
        kept = Kept(key: key, ctx: ctx)
        return ctx
    }
}
