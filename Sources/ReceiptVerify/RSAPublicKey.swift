import COpenSSL

/// An RSA public key prepared for `PKCS1Verifier`: the modulus n and the exponent e as BIGNUMs and n's
/// Montgomery context, built once on the cache-miss path (under the cache's lock) and read-only afterwards, so
/// every worker thread shares it.
///
/// Sharing is safe because `BN_mod_exp_mont` only reads the `BN_MONT_CTX` it is given (it hands it to
/// `BN_to_montgomery`, `BN_mod_mul_montgomery` and `BN_from_montgomery`, which read N, RR and n0); OpenSSL's own
/// RSA public operation relies on the same thing: it sets `rsa->_method_mod_n` once under a lock and then passes
/// it to `BN_mod_exp_mont` from any number of threads. None of the three BIGNUMs carries `BN_FLG_CONSTTIME` (they
/// are made fresh from the key's bytes), so `BN_mod_exp_mont` never switches to the constant-time variant.
final class RSAPublicKey: @unchecked Sendable {
    let n: OpaquePointer
    let e: OpaquePointer
    let mont: OpaquePointer
    /// e as a machine word (at most `maxExponentBits` bits), for `MontgomeryPower`'s walk over its bits.
    let exponent: UInt64
    /// The modulus length in bytes (k in RFC 8017): the length of every acceptable signature and of the
    /// encoded message block.
    let byteCount: Int
    /// What `MontgomeryPower.scaledPower` of a valid signature equals, per digest; nil for an even e or e = 1
    /// (and when OpenSSL could not compute it): `PKCS1Verifier` then compares s^e mod n with the block itself.
    let target: MontgomeryTarget?

    /// Moduli outside this range keep OpenSSL's own path (`EVP_PKEY_verify`), unchanged. 1024 bits: every
    /// receipt key Apple has used is 2048, and below 1024 the PKCS #1 block may be too short for a SHA-256
    /// DigestInfo. 8192 bits: bounds the per-receipt cost of a hostile key at about 16x that of RSA-2048 and the
    /// verifier's scratch at 1 KiB (OpenSSL itself allows 16384).
    static let bitRange = 1024...8192
    /// Public exponents longer than this keep OpenSSL's path. OpenSSL caps e at 64 bits only above 3072-bit
    /// moduli; a long e makes one verification cost as much as a private-key operation, so the shared path
    /// takes only e of at most 64 bits (Apple's is 65537).
    static let maxExponentBits = 64
    /// The largest `byteCount`: the size of the verifier's scratch blocks.
    static let maxByteCount = (bitRange.upperBound + 7) / 8

    /// Prepares `key` (an `EVP_PKEY`); `nil` when it is not an RSA key inside the limits above, or when OpenSSL
    /// cannot export it. Allocates: call only where the chain is decoded (the cache-miss path).
    init?(_ key: OpaquePointer) {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else { return nil }
        // "n" and "e" are OSSL_PKEY_PARAM_RSA_N and OSSL_PKEY_PARAM_RSA_E (string macros).
        var n0: OpaquePointer? = nil
        var e0: OpaquePointer? = nil
        defer {
            BN_free(n0)
            BN_free(e0)
            ERR_clear_error()
        }
        guard EVP_PKEY_get_bn_param(key, "n", &n0) == 1, EVP_PKEY_get_bn_param(key, "e", &e0) == 1,
            let nIn = n0, let eIn = e0
        else { return nil }
        let bits = Int(BN_num_bits(nIn))
        let eBits = Int(BN_num_bits(eIn))
        // Montgomery reduction needs an odd modulus; a negative n or e is no RSA key.
        guard Self.bitRange.contains(bits), BN_is_odd(nIn) == 1, BN_is_negative(nIn) == 0,
            BN_is_negative(eIn) == 0, (1...Self.maxExponentBits).contains(eBits)
        else { return nil }
        guard let n = Self.fresh(nIn), let e = Self.fresh(eIn) else { return nil }
        guard let mont = BN_MONT_CTX_new() else {
            BN_free(n)
            BN_free(e)
            return nil
        }
        let ctx = BN_CTX_new()
        guard let ctx, BN_MONT_CTX_set(mont, n, ctx) == 1 else {
            BN_CTX_free(ctx)
            BN_MONT_CTX_free(mont)
            BN_free(n)
            BN_free(e)
            return nil
        }
        BN_CTX_free(ctx)
        self.n = n
        self.e = e
        self.mont = mont
        // BN_get_word returns e itself: e has at most 64 bits (checked above).
        exponent = UInt64(BN_get_word(e))
        byteCount = (bits + 7) / 8
        target = MontgomeryTarget(n: n, e: exponent, mont: mont, byteCount: byteCount)
    }

    deinit {
        BN_MONT_CTX_free(mont)
        BN_free(n)
        BN_free(e)
    }

    /// A copy of `bn` made from its magnitude bytes, so it carries no flags (BN_FLG_CONSTTIME in particular).
    private static func fresh(_ bn: OpaquePointer) -> OpaquePointer? {
        let count = (Int(BN_num_bits(bn)) + 7) / 8
        var bytes = [UInt8](repeating: 0, count: max(count, 1))
        return bytes.withUnsafeMutableBufferPointer { b -> OpaquePointer? in
            // b holds at least BN_num_bytes(bn) bytes, what BN_bn2bin writes.
            let written = BN_bn2bin(bn, b.baseAddress)
            return BN_bin2bn(b.baseAddress, written, nil)
        }
    }
}
