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
/// the decrypted block, the DigestInfo encoding); `BN_mod_exp_mont` with a kept `BN_CTX` and the key's kept
/// `BN_MONT_CTX` costs the same time and, once its BN_CTX pool has grown, allocates nothing.
///
/// The check is a comparison of the whole decrypted block with the one valid encoding (RFC 8017 section 9.2,
/// EMSA-PKCS1-v1_5): `00 01 FF..FF 00 || DigestInfo || digest`. The block is never parsed, so there is nothing
/// for a Bleichenbacher-style forgery (garbage after the digest, parameters hiding bytes, short padding) to
/// slip through. That is also what OpenSSL 3.0's `RSA_verify` accepts: it re-encodes the DigestInfo (with the
/// NULL parameters) and compares it with everything after the padding, so a DigestInfo without the NULL is
/// rejected there too (tested against `EVP_PKEY_verify` in PKCS1VerifierTests).
final class PKCS1Verifier {
    private let ctx: OpaquePointer
    /// The signature representative s, then the message representative m = s^e mod n.
    private let s: OpaquePointer
    private let m: OpaquePointer
    /// The decrypted block and the expected one, `RSAPublicKey.maxByteCount` bytes each. Kept rather than on the
    /// stack: Swift gives no guaranteed stack allocation of a run-time size, and a kept buffer costs nothing.
    private let block: UnsafeMutableRawBufferPointer
    private let expected: UnsafeMutableRawBufferPointer

    init() {
        // Allocation failures here happen only when the process is out of memory at start-up.
        guard let ctx = BN_CTX_new(), let s = BN_new(), let m = BN_new() else {
            fatalError("OpenSSL could not allocate the RSA verification scratch")
        }
        self.ctx = ctx
        self.s = s
        self.m = m
        block = .allocate(byteCount: RSAPublicKey.maxByteCount, alignment: 16)
        expected = .allocate(byteCount: RSAPublicKey.maxByteCount, alignment: 16)
    }

    deinit {
        BN_CTX_free(ctx)
        BN_free(s)
        BN_free(m)
        block.deallocate()
        expected.deallocate()
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
        let tail = info.bytes.count + digest.count
        guard k >= tail + 11 else { return false }

        // s as an integer; s >= n is not a signature (step 2a, RSAVP1 step 1). BN_bin2bn reuses s's words.
        guard BN_bin2bn(sig.assumingMemoryBound(to: UInt8.self), Int32(k), s) != nil, BN_ucmp(s, key.n) < 0 else {
            return false
        }
        // m = s^e mod n, then I2OSP(m, k) into the kept block: m < n < 256^k, so it always fits.
        guard BN_mod_exp_mont(m, s, key.e, key.n, ctx, key.mont) == 1,
            BN_bn2binpad(m, block.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(k)) == Int32(k)
        else {
            ERR_clear_error()
            return false
        }

        // The one valid block of k bytes; `expected` holds maxByteCount >= k bytes, and k >= tail + 11.
        let out = expected.baseAddress!
        out.storeBytes(of: 0x00, as: UInt8.self)
        out.storeBytes(of: 0x01, toByteOffset: 1, as: UInt8.self)
        memset(out + 2, 0xFF, k - tail - 3)
        out.storeBytes(of: 0x00, toByteOffset: k - tail - 1, as: UInt8.self)
        info.bytes.withUnsafeBytes { p in
            // p holds info.bytes.count bytes; they end where the digest starts, at k - digest.count.
            _ = memcpy(out + (k - tail), p.baseAddress!, p.count)
        }
        memcpy(out + (k - digest.count), digestBytes, digest.count)
        return memcmp(block.baseAddress!, out, k) == 0
    }
}

/// The DER `DigestInfo` prefix of EMSA-PKCS1-v1_5 (RFC 8017 section 9.2): everything before the digest bytes,
/// with the NULL parameters, the only form OpenSSL's RSA_verify accepts.
struct DigestInfo {
    let bytes: [UInt8]
    let digestLength: Int

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
