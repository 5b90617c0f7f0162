import COpenSSL
import ReceiptDER
import ReceiptSynth
import Testing

@testable import ReceiptVerify

/// `MontgomeryTarget` and `MontgomeryPower.scaledPower` against OpenSSL's BN arithmetic, by the property each must
/// have rather than by the formulas the code uses: T·R^(e−1) ≡ EM (mod n) with T in [0, n), where R^(e−1) mod n is
/// computed here by exponentiating R (the code inverts R first), and y·R^(e−1) ≡ s^e (mod n) with s^e from
/// `BN_mod_exp_mont`.
struct MontgomeryTargetTests {
    /// Odd exponents above 1 (the others have no target), including the 64-bit extremes.
    static let exponents: [UInt64] = [3, 17, 65537, 0b1011_0110_1101, 0xFFFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0001]

    /// R^(e−1) mod n for R = 2^(64·words of n), without an inverse.
    static func rPower(_ n: OpaquePointer, e: UInt64, _ ctx: OpaquePointer) -> OpaquePointer {
        let r = BN_new()!
        let exponent = BN_new()!
        defer { BN_free(exponent) }
        let words = (Int(BN_num_bits(n)) + 63) / 64
        precondition(BN_set_word(r, 0) == 1 && BN_set_bit(r, Int32(64 * words)) == 1)
        precondition(BN_nnmod(r, r, n, ctx) == 1)
        precondition(BN_set_word(exponent, UInt(e - 1)) == 1)
        precondition(BN_mod_exp(r, r, exponent, n, ctx) == 1)
        return r
    }

    /// Digests of every shape: random, all zero, all 0xFF, and one bit at each end.
    static func digests(_ length: Int, _ rng: inout SplitMix) -> [[UInt8]] {
        var out: [[UInt8]] = [
            [UInt8](repeating: 0, count: length), [UInt8](repeating: 0xFF, count: length),
            [0x80] + [UInt8](repeating: 0, count: length - 1), [UInt8](repeating: 0, count: length - 1) + [1],
        ]
        for _ in 0..<6 { out.append((0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }
        return out
    }

    @Test(arguments: MontgomeryPowerTests.moduli)
    func targetTimesRToTheEMinusOneIsTheBlock(bits: Int) throws {
        let n = MontgomeryPowerTests.randomOddModulus(bits: bits)
        let ctx = BN_CTX_new()!
        let t = BN_new()!
        let em = BN_new()!
        let back = BN_new()!
        defer {
            [n, t, em, back].forEach { BN_free($0) }
            BN_CTX_free(ctx)
        }
        var rng = SplitMix(seed: UInt64(bits))
        for e in Self.exponents {
            let key = try #require(MontgomeryPowerTests.publicKey(n: n, e: e))
            let target = try #require(key.target, "no target for e = \(e), \(bits) bits")
            let scratch = UnsafeMutablePointer<UInt64>.allocate(capacity: MontgomeryTarget.scratchWords(target.words))
            defer { scratch.deallocate() }
            let rp = Self.rPower(n, e: e, ctx)
            defer { BN_free(rp) }
            for algorithm in [DigestAlgorithm.sha1, .sha256] {
                let length = algorithm == .sha1 ? 20 : 32
                for digest in Self.digests(length, &rng) {
                    let ok = digest.withUnsafeBytes {
                        target.target(t, digest: $0, sha1: algorithm == .sha1, scratch: scratch)
                    }
                    #expect(ok)
                    #expect(BN_is_negative(t) == 0 && BN_ucmp(t, n) < 0, "T is not reduced: e = \(e), \(bits) bits")
                    let block = PKCS1Block.valid(digest, algorithm, k: key.byteCount)
                    #expect(BN_bin2bn(block, Int32(block.count), em) != nil)
                    #expect(BN_mod_mul(back, t, rp, n, ctx) == 1)
                    #expect(
                        BN_cmp(back, em) == 0,
                        "T·R^(e−1) is not EM: e = \(e), \(bits)-bit n, \(algorithm), digest \(digest)")
                }
            }
        }
    }

    @Test(arguments: MontgomeryPowerTests.moduli)
    func scaledPowerTimesRToTheEMinusOneIsSToTheE(bits: Int) throws {
        let n = MontgomeryPowerTests.randomOddModulus(bits: bits)
        let ctx = BN_CTX_new()!
        let power = MontgomeryPower(ctx: ctx)
        let y = BN_new()!
        let want = BN_new()!
        let back = BN_new()!
        defer {
            [n, y, want, back].forEach { BN_free($0) }
            BN_CTX_free(ctx)
        }
        for e in Self.exponents {
            let key = try #require(MontgomeryPowerTests.publicKey(n: n, e: e))
            let rp = Self.rPower(n, e: e, ctx)
            defer { BN_free(rp) }
            for base in MontgomeryPowerTests.bases(n, count: 8) {
                defer { BN_free(base) }
                #expect(power.scaledPower(y, base, key))
                #expect(BN_ucmp(y, n) < 0)
                #expect(BN_mod_exp_mont(want, base, key.e, key.n, ctx, key.mont) == 1)
                #expect(BN_mod_mul(back, y, rp, n, ctx) == 1)
                #expect(BN_cmp(back, want) == 0, "y·R^(e−1) is not s^e: e = \(e), \(bits)-bit n")
            }
        }
    }

    @Test func evenExponentsAndOneHaveNoTarget() throws {
        let n = MontgomeryPowerTests.randomOddModulus(bits: 2048)
        defer { BN_free(n) }
        for e: UInt64 in [1, 2, 4, 65536, 0x8000_0000_0000_0000] {
            let key = try #require(MontgomeryPowerTests.publicKey(n: n, e: e))
            #expect(key.target == nil, "e = \(e)")
        }
    }
}
