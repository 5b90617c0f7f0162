import COpenSSL

/// The RSA public operation m = s^e mod n for one thread, built from OpenSSL's Montgomery product
/// (`BN_mod_mul_montgomery`, the same assembly `BN_mod_exp_mont` runs) with two products fewer than
/// `BN_mod_exp_mont` for Apple's e = 65537.
///
/// With M(a, b) = a·b·R⁻¹ mod n (R = 2^(64·words)), `BN_mod_exp_mont` in OpenSSL 3.0 converts s into Montgomery
/// form (sR = M(s, R² mod n)), starts from 1 in Montgomery form and multiplies it by sR for the top bit, squares
/// 16 times, multiplies by sR once more, and converts back (`BN_from_montgomery`, C code in 3.0, about the price
/// of a product): 16 squarings and 4 products' worth of work. Here the accumulator starts at sR, and the last
/// multiplication takes s itself instead of sR: M(s^(e-1)·R, s) = s^e mod n, already out of Montgomery form.
/// That is 16 squarings and 2 products (the conversion in and the last one). Both results are fully reduced
/// (the product ends with its conditional subtraction), so they are the same integer in [0, n).
///
/// The shortcut needs the last exponent bit set: exponents that are even or 1 (never an RSA key's; `RSAPublicKey`
/// admits any e of at most 64 bits) go to `BN_mod_exp_mont` unchanged.
final class MontgomeryPower {
    private let ctx: OpaquePointer
    /// s in Montgomery form, and the accumulator.
    private let sR: OpaquePointer
    private let acc: OpaquePointer

    /// - Parameter ctx: the caller's `BN_CTX`, kept alive by the caller for this object's lifetime.
    init(ctx: OpaquePointer) {
        guard let sR = BN_new(), let acc = BN_new() else {
            fatalError("OpenSSL could not allocate the RSA exponentiation scratch")
        }
        self.ctx = ctx
        self.sR = sR
        self.acc = acc
    }

    deinit {
        BN_free(sR)
        BN_free(acc)
    }

    /// m = s^e mod n for `key`; `s` must be below n (the caller rejects larger signatures first, as RSAVP1
    /// does). False when OpenSSL fails (out of memory).
    func power(_ m: OpaquePointer, _ s: OpaquePointer, _ key: RSAPublicKey) -> Bool {
        let e = key.exponent
        guard e & 1 == 1, e > 1 else { return BN_mod_exp_mont(m, s, key.e, key.n, ctx, key.mont) == 1 }
        guard BN_to_montgomery(sR, s, key.mont, ctx) == 1 else { return false }
        return chain(m, from: sR, s, key)
    }

    /// y = s^e · R^(1−e) mod n for `key` (e odd and above 1: the caller checks, as `MontgomeryTarget` exists only
    /// for such keys): the chain of `power` run from s itself, without converting it into Montgomery form first,
    /// which treats s as the Montgomery form of s·R⁻¹ (`MontgomeryTarget` says what y must then equal). `s` must
    /// be below n. False when OpenSSL fails (out of memory).
    func scaledPower(_ y: OpaquePointer, _ s: OpaquePointer, _ key: RSAPublicKey) -> Bool {
        chain(y, from: s, s, key)
    }

    /// The products for an odd e > 1 with `start` as the Montgomery form of the base: M(start^(e−1)·R^(2−e), s).
    /// With start = sR that is s^e mod n; with start = s, s^e·R^(1−e) mod n.
    private func chain(_ m: OpaquePointer, from start: OpaquePointer, _ s: OpaquePointer, _ key: RSAPublicKey)
        -> Bool
    {
        let e = key.exponent
        let mont = key.mont
        // Left to right over the bits below the top one (e > 1, so there is at least one): square, then multiply
        // by the start where the bit is set, except at bit 0 (set: e is odd), where the factor is s and the product
        // leaves Montgomery form.
        var bit = 63 - e.leadingZeroBitCount - 1
        var base = start
        while bit > 0 {
            guard BN_mod_mul_montgomery(acc, base, base, mont, ctx) == 1 else { return false }
            base = acc
            if (e >> UInt64(bit)) & 1 == 1 {
                guard BN_mod_mul_montgomery(acc, acc, start, mont, ctx) == 1 else { return false }
            }
            bit -= 1
        }
        return BN_mod_mul_montgomery(acc, base, base, mont, ctx) == 1
            && BN_mod_mul_montgomery(m, acc, s, mont, ctx) == 1
    }
}
