import COpenSSL
import ReceiptDER

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// RSASSA-PKCS1-v1_5 verification (RFC 8017 section 8.2.2) through OpenSSL's BN API, with every piece of
/// scratch kept: one per `ReceiptVerifier` (so one per worker thread), allocation-free once warm.
///
/// `EVP_PKEY_verify` does the same mathematics but makes 12 heap allocations per call in OpenSSL 3.0 (a BN_CTX,
/// the decrypted block, the DigestInfo encoding). Here s^e mod n is `MontgomeryPower` (OpenSSL's Montgomery
/// product with a kept `BN_CTX` and the key's kept `BN_MONT_CTX`): two products fewer than `BN_mod_exp_mont`
/// for e = 65537 and, once its BN_CTX pool has grown, no allocation.
///
/// The check is that m = s^e mod n equals the one valid encoding (RFC 8017 section 9.2, EMSA-PKCS1-v1_5)
/// `00 01 FF..FF 00 || DigestInfo || digest`, the whole k-byte block, built here. The comparison is made
/// between integers: m against the value of that block (the block with the digest bytes zero, kept per modulus
/// length and algorithm, plus the digest). I2OSP is one-to-one on [0, 256^k), so equal integers are equal
/// k-byte blocks; this is the whole-block comparison, without `BN_bn2binpad` (0.37 µs, a constant-time loop in
/// 3.0) or a memcmp. The block is never parsed, so there is nothing for a Bleichenbacher-style forgery (garbage
/// after the digest, parameters hiding bytes, short padding) to slip through. That is also what OpenSSL 3.0's
/// `RSA_verify` accepts: it re-encodes the DigestInfo (with the NULL parameters) and compares it with everything
/// after the padding, so a DigestInfo without the NULL is rejected there too (tested against `EVP_PKEY_verify`
/// in PKCS1VerifierTests).
///
/// For keys with a `MontgomeryTarget` (every odd e > 1, Apple's 65537 included) both sides of that comparison
/// are multiplied by R^(1−e) mod n, which is invertible: y = s^e·R^(1−e) from `MontgomeryPower.scaledPower`
/// (one Montgomery product fewer) against T = EM·R^(1−e), both in [0, n). Equal exactly when s^e mod n = EM.
final class PKCS1Verifier {
    private let ctx: OpaquePointer
    /// The signature representative s, then the message representative m = s^e mod n.
    private let s: OpaquePointer
    private let m: OpaquePointer
    /// The digest as an integer, and the expected m: `padded` + digest.
    private let d: OpaquePointer
    private let expected: OpaquePointer
    /// The valid block with the digest bytes zero, as an integer, per algorithm, for the last modulus length.
    private var sha1Padded: Padded
    private var sha256Padded: Padded
    /// s^e mod n with the key's Montgomery context (shares `ctx`).
    private let power: MontgomeryPower
    /// False: every key takes the plain comparison of s^e mod n with the block (tests compare the two paths).
    var usesScaledComparison = true
    /// `MontgomeryTarget.target`'s scratch, for the largest modulus. Kept, not on the stack: Swift gives no
    /// guaranteed stack allocation of a run-time size.
    private let words: UnsafeMutablePointer<UInt64>

    private struct Padded {
        let value: OpaquePointer
        /// The modulus length `value` was built for; 0 before the first use.
        var length = 0
    }

    init() {
        // Allocation failures here happen only when the process is out of memory at start-up.
        guard let ctx = BN_CTX_new(), let s = BN_new(), let m = BN_new(), let d = BN_new(), let e = BN_new(),
            let p1 = BN_new(), let p256 = BN_new()
        else { fatalError("OpenSSL could not allocate the RSA verification scratch") }
        self.ctx = ctx
        self.s = s
        self.m = m
        self.d = d
        expected = e
        sha1Padded = Padded(value: p1)
        sha256Padded = Padded(value: p256)
        power = MontgomeryPower(ctx: ctx)
        words = .allocate(capacity: MontgomeryTarget.scratchWords((RSAPublicKey.maxByteCount + 7) / 8))
    }

    deinit {
        BN_CTX_free(ctx)
        for bn in [s, m, d, expected, sha1Padded.value, sha256Padded.value] { BN_free(bn) }
        words.deallocate()
    }

    /// True when `signature` is `key`'s PKCS #1 v1.5 signature of `digest` made with `algorithm`.
    ///
    /// - Parameter digest: exactly `DigestInfo.prefix(algorithm).digestLength` bytes.
    func verify(
        _ key: RSAPublicKey, signature: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer,
        algorithm: DigestAlgorithm
    ) -> Bool {
        let k = key.byteCount
        // The signature must be exactly k octets (RFC 8017 8.2.2 step 1), as OpenSSL's RSA_verify requires
        // (RSA_R_WRONG_SIGNATURE_LENGTH); a shorter one with the leading zeros dropped is not accepted, by
        // either. It also bounds the BN_bin2bn below to k <= maxByteCount bytes.
        guard signature.count == k, let sig = signature.baseAddress else { return false }
        guard let info = DigestInfo.prefix(algorithm), digest.count == info.digestLength,
            let digestBytes = digest.baseAddress
        else { return false }
        // Every RSAPublicKey has k >= 128, so k >= 51 + 11 (the 8 FF bytes PKCS #1 requires at the least).
        guard k >= info.bytes.count + digest.count + 11 else { return false }

        // s as an integer; s >= n is not a signature (step 2a, RSAVP1 step 1). BN_bin2bn reuses s's words.
        guard BN_bin2bn(sig.assumingMemoryBound(to: UInt8.self), Int32(k), s) != nil, BN_ucmp(s, key.n) < 0 else {
            return false
        }
        if usesScaledComparison, let target = key.target {
            // y = s^e·R^(1−e) mod n against T = EM·R^(1−e) mod n (see the type's comment).
            guard power.scaledPower(m, s, key),
                target.target(expected, digest: digest, sha1: algorithm == .sha1, scratch: words)
            else {
                ERR_clear_error()
                return false
            }
            return BN_cmp(m, expected) == 0
        }
        // m = s^e mod n; expected = the valid block's value: the padded prefix plus the digest in the low bytes
        // (where the prefix has zeros, so the sum is the concatenation).
        guard let padded = paddedValue(info, k: k, sha1: algorithm == .sha1),
            power.power(m, s, key),
            BN_bin2bn(digestBytes.assumingMemoryBound(to: UInt8.self), Int32(digest.count), d) != nil,
            BN_add(expected, padded, d) == 1
        else {
            ERR_clear_error()
            return false
        }
        return BN_cmp(m, expected) == 0
    }

    /// The value of `00 01 FF..FF 00 || DigestInfo || 00..00` (k bytes, the digest zero) for `info`, rebuilt
    /// only when the modulus length changes; nil when OpenSSL cannot allocate it.
    private func paddedValue(_ info: DigestInfo, k: Int, sha1: Bool) -> OpaquePointer? {
        let cached = sha1 ? sha1Padded : sha256Padded
        if cached.length == k { return cached.value }
        // The caller checked k >= tail + 11. Rebuilt rarely (a new modulus length), so the array is no concern.
        let block = info.zeroDigestBlock(k: k)
        // On failure (out of memory) the value is unusable: forget its length and reject this signature.
        if sha1 { sha1Padded.length = 0 } else { sha256Padded.length = 0 }
        guard BN_bin2bn(block, Int32(k), cached.value) != nil else { return nil }
        if sha1 { sha1Padded.length = k } else { sha256Padded.length = k }
        return cached.value
    }
}

/// The DER `DigestInfo` prefix of EMSA-PKCS1-v1_5 (RFC 8017 section 9.2): everything before the digest bytes,
/// with the NULL parameters, the only form OpenSSL's RSA_verify accepts.
struct DigestInfo {
    let bytes: [UInt8]
    let digestLength: Int

    /// `00 01 FF..FF 00 || DigestInfo || 00..00`: the valid k-byte block with the digest bytes zero. k must be at
    /// least `bytes.count + digestLength + 11` (8 FF bytes at the least).
    func zeroDigestBlock(k: Int) -> [UInt8] {
        let tail = bytes.count + digestLength
        precondition(k >= tail + 11, "a PKCS #1 v1.5 block needs at least 8 bytes of padding")
        return [0x00, 0x01] + [UInt8](repeating: 0xFF, count: k - tail - 3) + [0x00] + bytes
            + [UInt8](repeating: 0, count: digestLength)
    }

    static func prefix(_ algorithm: DigestAlgorithm) -> DigestInfo? {
        switch algorithm {
        case .sha1: return sha1
        case .sha256: return sha256
        case .unsupported: return nil
        }
    }

    /// SEQUENCE { SEQUENCE { OID 1.3.14.3.2.26, NULL }, OCTET STRING (20) }: 2 + 2 + 7 + 2 + 2 + 20 = 35 bytes.
    static let sha1 = DigestInfo(
        bytes: [0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A, 0x05, 0x00, 0x04, 0x14],
        digestLength: 20)
    /// SEQUENCE { SEQUENCE { OID 2.16.840.1.101.3.4.2.1, NULL }, OCTET STRING (32) }: 2 + 2 + 11 + 2 + 2 + 32 = 51.
    static let sha256 = DigestInfo(
        bytes: [
            0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00,
            0x04, 0x20,
        ],
        digestLength: 32)
}
