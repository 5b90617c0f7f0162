import COpenSSL
import ReceiptSynth
import Testing

@testable import ReceiptVerify

/// `MontgomeryPower` (the verifier's s^e mod n) against OpenSSL's `BN_mod_exp_mont` on the same integers: every
/// exponent shape the walk over the bits treats differently, moduli whose top word is full or nearly empty, and
/// bases at the edges of [0, n).
struct MontgomeryPowerTests {
    /// Exponents: the RSA ones, bit patterns that exercise each branch of the walk, the 64-bit extreme, and the
    /// even exponents and 1, which take the `BN_mod_exp_mont` path inside `power`.
    static let exponents: [UInt64] = [
        3, 5, 7, 17, 257, 65537, 0b1011_0110_1101, 0x1_0000_0001, 0xFFFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0001,
        0xD3A5_19C4_6B07_E2F1, 1, 2, 4, 65536, 0x8000_0000_0000_0000,
    ]
    /// Modulus sizes: 2048 (Apple's), the limits 1024 and 8192, and sizes whose top 64-bit word holds 1 or 7 bits
    /// (1025, 1543), where OpenSSL's product takes its generic path for short operands.
    static let moduli = [2048, 1024, 1025, 1543, 3072, 8192]

    @Test(arguments: moduli)
    func agreesWithBNModExpMont(bits: Int) throws {
        let n = Self.randomOddModulus(bits: bits)
        defer { BN_free(n) }
        let ctx = BN_CTX_new()!
        defer { BN_CTX_free(ctx) }
        let power = MontgomeryPower(ctx: ctx)
        let s = BN_new()!
        let got = BN_new()!
        let want = BN_new()!
        defer { [s, got, want].forEach { BN_free($0) } }
        for e in Self.exponents {
            let key = try #require(Self.publicKey(n: n, e: e), "no RSAPublicKey for e = \(e), \(bits) bits")
            #expect(key.exponent == e)
            for base in Self.bases(n, count: 12) {
                defer { BN_free(base) }
                #expect(BN_mod_exp_mont(want, base, key.e, key.n, ctx, key.mont) == 1)
                #expect(power.power(got, base, key))
                #expect(
                    BN_cmp(got, want) == 0, "s^e mod n differs: e = \(e), \(bits)-bit n, s = \(Self.hex(base))")
            }
        }
    }

    /// The verifier's path on real signatures: a PKCS #1 v1.5 signature by the test leaf raised to e gives back
    /// its padded block, through `power`, exactly as OpenSSL's exponentiation does.
    @Test func recoversTheSignedBlock() throws {
        let key = try #require(RSATestKey.leaf.prepared)
        #expect(key.exponent == 65537)
        let block = PKCS1Block.valid([UInt8](repeating: 0x5A, count: 32), .sha256, k: key.byteCount)
        let signature = try #require(RSATestKey.leaf.sign(block: block))
        let ctx = BN_CTX_new()!
        defer { BN_CTX_free(ctx) }
        let s = BN_bin2bn(signature, Int32(signature.count), nil)!
        let m = BN_new()!
        defer { [s, m].forEach { BN_free($0) } }
        #expect(MontgomeryPower(ctx: ctx).power(m, s, key))
        var out = [UInt8](repeating: 0, count: key.byteCount)
        #expect(BN_bn2binpad(m, &out, Int32(out.count)) == Int32(out.count))
        #expect(out == block)
    }

    /// An odd modulus of exactly `bits` bits (Montgomery reduction needs only odd; it need not be an RSA modulus).
    static func randomOddModulus(bits: Int) -> OpaquePointer {
        let n = BN_new()!
        precondition(BN_rand(n, Int32(bits), BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ODD) == 1)
        return n
    }

    /// 0, 1, 2, n - 1, n - 2 and random values below n.
    static func bases(_ n: OpaquePointer, count: Int) -> [OpaquePointer] {
        var out: [OpaquePointer] = []
        for w: UInt in [0, 1, 2] {
            let b = BN_new()!
            BN_set_word(b, w)
            out.append(b)
        }
        for w: UInt in [1, 2] {
            let b = BN_dup(n)!
            BN_sub_word(b, w)
            out.append(b)
        }
        for _ in 0..<count {
            let b = BN_new()!
            precondition(BN_rand_range(b, n) == 1)
            out.append(b)
        }
        return out
    }

    /// `RSAPublicKey` for (n, e) through OpenSSL's PKCS #1 RSAPublicKey decoder (SEQUENCE { n, e }).
    static func publicKey(n: OpaquePointer, e: UInt64) -> RSAPublicKey? {
        func magnitude(_ bn: OpaquePointer) -> [UInt8] {
            var b = [UInt8](repeating: 0, count: (Int(BN_num_bits(bn)) + 7) / 8)
            _ = BN_bn2bin(bn, &b)
            return b
        }
        var eBytes = withUnsafeBytes(of: e.bigEndian) { Array($0) }
        while eBytes.count > 1, eBytes[0] == 0 { eBytes.removeFirst() }
        let der = DER.sequence([DER.unsignedInteger(magnitude(n)), DER.unsignedInteger(eBytes)])
        let evp = der.withUnsafeBufferPointer { b -> OpaquePointer? in
            var p = b.baseAddress
            return d2i_PublicKey(EVP_PKEY_RSA, nil, &p, b.count)
        }
        guard let evp else { return nil }
        defer { EVP_PKEY_free(evp) }
        return RSAPublicKey(evp)
    }

    static func hex(_ bn: OpaquePointer) -> String {
        guard let p = BN_bn2hex(bn) else { return "?" }
        defer { rf_OPENSSL_free(p) }
        return String(cString: p)
    }
}
