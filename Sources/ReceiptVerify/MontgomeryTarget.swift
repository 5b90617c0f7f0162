import COpenSSL

/// What a valid signature's scaled power must equal: T = EM · R^(1−e) mod n, for the PKCS #1 v1.5 block EM of a
/// digest, so that the verifier can skip the product that brings s into Montgomery form.
///
/// With M(a, b) = a·b·R⁻¹ mod n (R = 2^(64·words), OpenSSL's Montgomery radix for n), `MontgomeryPower.power`
/// first converts s (sR = M(s, R² mod n), one product) and then runs e's chain of products. Run from s itself, the
/// same chain treats s as the Montgomery form of s·R⁻¹ and gives Y = s^e · R^(1−e) mod n
/// (`MontgomeryPower.scaledPower`). R is invertible mod n (n is odd), so s^e ≡ EM exactly when Y ≡ EM · R^(1−e),
/// and with both sides fully reduced into [0, n) that is Y == T: the comparison is still one between integers, as
/// exact as comparing s^e with EM.
///
/// EM = P + H, where P is the valid block with the digest bytes zero (fixed per key and algorithm) and H is the
/// digest, so T = (P·C mod n) + (H·C mod n), reduced once more, with C = R^(1−e) mod n. P·C mod n is computed here
/// once per key (on the chain cache's miss path, with OpenSSL's BN functions). H·C mod n is computed per receipt
/// from K = C·2^(64·h) mod n (h: the digest's words): H·K has h + words words, and h Montgomery reduction steps
/// divide it by 2^(64·h) modulo n, leaving H·C mod n below 2n. That is about 2·h·words word products (256 for
/// SHA-256 under a 2048-bit key) instead of the conversion's words² (1,024).
///
/// Immutable after `init`, so shared by every worker thread, like the `RSAPublicKey` that holds it.
final class MontgomeryTarget: @unchecked Sendable {
    /// n's 64-bit words (R = 2^(64·words)).
    let words: Int
    /// n, least significant word first.
    private let n: UnsafeMutablePointer<UInt64>
    /// −n⁻¹ mod 2^64: the factor of a Montgomery reduction step.
    private let n0: UInt64
    private let sha1: Part
    private let sha256: Part

    /// P·C mod n and K for one digest algorithm, `words` words each, least significant first.
    private struct Part {
        let pc: UnsafeMutablePointer<UInt64>
        let k: UnsafeMutablePointer<UInt64>
        let digestLength: Int
        var digestWords: Int { (digestLength + 7) / 8 }
    }

    /// Words of scratch `target` needs for a modulus of `words` words.
    static func scratchWords(_ words: Int) -> Int { words + 2 * maxDigestWords + 2 }
    /// SHA-256: 4 words; SHA-1: 3.
    static let maxDigestWords = 4

    /// For the key (n, e) of `byteCount` bytes; nil for exponents the scaled chain does not cover (even, or 1:
    /// `MontgomeryPower` takes `BN_mod_exp_mont` for those), on a big-endian machine (the words are handed to
    /// OpenSSL as little-endian bytes), or when OpenSSL fails (out of memory). Allocates: cache-miss path only.
    init?(n bn: OpaquePointer, e: UInt64, mont: OpaquePointer, byteCount: Int) {
        #if _endian(big)
            return nil
        #else
            guard e & 1 == 1, e > 1, e - 1 <= UInt64(UInt.max) else { return nil }
            let words = (Int(BN_num_bits(bn)) + 63) / 64
            guard let ctx = BN_CTX_new() else { return nil }
            defer { BN_CTX_free(ctx) }
            BN_CTX_start(ctx)
            defer { BN_CTX_end(ctx) }
            // C = (R⁻¹)^(e−1) mod n, with R⁻¹ mod n = `BN_from_montgomery(1)` (1·R⁻¹ mod n): one reduction and
            // one exponentiation under the key's own Montgomery context, no modular inverse (callgrind, whole
            // `init` for an RSA-2048 key: 3.1 M instructions with `BN_mod_inverse`, 0.35 M this way). cr = C·R mod n,
            // so that M(P, cr) = P·C mod n.
            guard let rInverse = BN_CTX_get(ctx), let exponent = BN_CTX_get(ctx), let c = BN_CTX_get(ctx),
                let cr = BN_CTX_get(ctx), let padded = BN_CTX_get(ctx), let value = BN_CTX_get(ctx),
                BN_from_montgomery(rInverse, BN_value_one(), mont, ctx) == 1,
                BN_set_word(exponent, UInt(e - 1)) == 1,
                BN_mod_exp_mont(c, rInverse, exponent, bn, ctx, mont) == 1,
                BN_to_montgomery(cr, c, mont, ctx) == 1
            else { return nil }
            let byteWords = words * 8
            func export(_ x: OpaquePointer) -> UnsafeMutablePointer<UInt64>? {
                let out = UnsafeMutablePointer<UInt64>.allocate(capacity: words)
                // out holds words·8 bytes; x < n < 2^(64·words), so it fits.
                guard
                    BN_bn2lebinpad(
                        x, UnsafeMutableRawPointer(out).assumingMemoryBound(to: UInt8.self),
                        Int32(byteWords)) == Int32(byteWords)
                else {
                    out.deallocate()
                    return nil
                }
                return out
            }
            func part(_ info: DigestInfo) -> Part? {
                let block = info.zeroDigestBlock(k: byteCount)
                let dw = (info.digestLength + 7) / 8
                // The block is below n (it starts 00 01, n has k bytes), as the Montgomery product needs.
                guard BN_bin2bn(block, Int32(block.count), padded) != nil,
                    BN_mod_mul_montgomery(value, padded, cr, mont, ctx) == 1, let pc = export(value)
                else { return nil }
                guard BN_lshift(value, c, Int32(64 * dw)) == 1, BN_nnmod(value, value, bn, ctx) == 1,
                    let k = export(value)
                else {
                    pc.deallocate()
                    return nil
                }
                return Part(pc: pc, k: k, digestLength: info.digestLength)
            }
            guard let nWords = export(bn) else { return nil }
            guard let sha1 = part(DigestInfo.sha1) else {
                nWords.deallocate()
                return nil
            }
            guard let sha256 = part(DigestInfo.sha256) else {
                nWords.deallocate()
                sha1.pc.deallocate()
                sha1.k.deallocate()
                return nil
            }
            // n⁻¹ mod 2^64 by Newton's iteration: x = n⁻¹ mod 2^j doubles j each step, from j = 3 (n·n ≡ 1 mod 8
            // for odd n, so x = n is right to 3 bits); five steps reach 96 bits.
            var x = nWords[0]
            for _ in 0..<5 { x = x &* (2 &- nWords[0] &* x) }
            self.words = words
            n = nWords
            n0 = 0 &- x
            self.sha1 = sha1
            self.sha256 = sha256
        #endif
    }

    deinit {
        n.deallocate()
        for p in [sha1, sha256] {
            p.pc.deallocate()
            p.k.deallocate()
        }
    }

    /// T = EM·R^(1−e) mod n for `digest` (big-endian, `algorithm`'s length: the caller checked), written into
    /// `t` as a BIGNUM. `scratch` holds `scratchWords(words)` words. False when OpenSSL fails.
    func target(
        _ t: OpaquePointer, digest: UnsafeRawBufferPointer, sha1 isSHA1: Bool, scratch: UnsafeMutablePointer<UInt64>
    ) -> Bool {
        let part = isSHA1 ? sha1 : sha256
        let nw = words
        let dw = part.digestWords
        // Layout: z (nw + dw + 1 words: H·K, then reduced in place), then H (dw words).
        let z = scratch
        let h = scratch + (nw + Self.maxDigestWords + 1)
        h.update(repeating: 0, count: dw)
        let length = part.digestLength
        for j in 0..<length {
            // Byte j from the end is bits 8j..8j+7 of H.
            h[j >> 3] |= UInt64(digest[length - 1 - j]) << UInt64((j & 7) << 3)
        }
        z.update(repeating: 0, count: nw + dw + 1)
        // z = H·K: row i adds H's word i times K at word i; z[i + nw] is still zero when row i writes it.
        for i in 0..<dw {
            z[i + nw] = Self.multiplyAdd(z + i, part.k, h[i], nw)
        }
        // Montgomery steps: m makes word i zero (m·n[0] ≡ −z[i] mod 2^64); the row's carry runs upward. H·K <
        // 2^(64·dw)·n and the rows add less than that again, so z < 2^(64·dw + 1)·n fits its nw + dw + 1 words.
        for i in 0..<dw {
            var carry = Self.multiplyAdd(z + i, n, z[i] &* n0, nw)
            var at = i + nw
            while carry != 0 && at <= nw + dw {
                let (sum, over) = z[at].addingReportingOverflow(carry)
                z[at] = sum
                carry = over ? 1 : 0
                at += 1
            }
        }
        // w = z / 2^(64·dw) ≡ H·C (mod n), below 2n: nw + 1 words from z[dw]. Add P·C (below n), then bring the
        // sum (below 3n) into [0, n).
        let w = z + dw
        var carry: UInt64 = 0
        for j in 0..<nw {
            let t = UInt128(w[j]) &+ UInt128(part.pc[j]) &+ UInt128(carry)
            w[j] = UInt64(truncatingIfNeeded: t)
            carry = UInt64(truncatingIfNeeded: t &>> 64)
        }
        w[nw] &+= carry
        for _ in 0..<2 where !Self.isBelow(w, n, nw) {
            Self.subtract(w, n, nw)
        }
        // w < n now: its low nw words are T, little-endian in memory on this (little-endian) machine.
        return BN_lebin2bn(UnsafeRawPointer(w).assumingMemoryBound(to: UInt8.self), Int32(nw * 8), t) != nil
    }

    /// z[0..<count] += a[0..<count]·f; returns the carry out (the word to add at z[count]). In 128 bits, so that
    /// the carries compile to add-with-carry, not to branches on random bits: f·a + z + carry <= 2^128 − 1.
    @inline(__always)
    private static func multiplyAdd(
        _ z: UnsafeMutablePointer<UInt64>, _ a: UnsafeMutablePointer<UInt64>, _ f: UInt64, _ count: Int
    ) -> UInt64 {
        var carry: UInt64 = 0
        for j in 0..<count {
            let t = UInt128(f) &* UInt128(a[j]) &+ UInt128(z[j]) &+ UInt128(carry)
            z[j] = UInt64(truncatingIfNeeded: t)
            carry = UInt64(truncatingIfNeeded: t &>> 64)
        }
        return carry
    }

    /// True when w (count + 1 words) is below n (count words).
    private static func isBelow(_ w: UnsafeMutablePointer<UInt64>, _ n: UnsafeMutablePointer<UInt64>, _ count: Int)
        -> Bool
    {
        if w[count] != 0 { return false }
        var j = count - 1
        while j >= 0 {
            if w[j] != n[j] { return w[j] < n[j] }
            j -= 1
        }
        return false
    }

    /// w (count + 1 words) −= n (count words); w >= n.
    private static func subtract(_ w: UnsafeMutablePointer<UInt64>, _ n: UnsafeMutablePointer<UInt64>, _ count: Int) {
        var borrow: UInt64 = 0
        for j in 0..<count {
            // Wrapped below zero, the 128-bit difference has its top bit set: that bit is the borrow.
            let t = UInt128(w[j]) &- UInt128(n[j]) &- UInt128(borrow)
            w[j] = UInt64(truncatingIfNeeded: t)
            borrow = UInt64(truncatingIfNeeded: t &>> 127)
        }
        w[count] &-= borrow
    }
}
