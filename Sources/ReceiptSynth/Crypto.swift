import COpenSSL
import Foundation

/// Errors from the OpenSSL glue. Generation inputs are the program's own, so these mean a broken environment
/// (missing provider, unreadable CA directory), not bad data.
public struct SynthError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }

    /// The message plus OpenSSL's error queue, which names the failing routine.
    static func openssl(_ what: String) -> SynthError {
        var text = what
        var code = ERR_get_error()
        while code != 0 {
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            text += "; " + String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            code = ERR_get_error()
        }
        return SynthError(text)
    }
}

/// Digests through pre-fetched OpenSSL `EVP_MD`s (fetched once: implicit fetches take a global lock).
enum Crypto {
    // The fetched EVP_MDs are immutable and reference counted, so sharing them across threads is safe.
    nonisolated(unsafe) static let sha1MD: OpaquePointer = EVP_MD_fetch(nil, "SHA1", nil)!
    nonisolated(unsafe) static let sha256MD: OpaquePointer = EVP_MD_fetch(nil, "SHA256", nil)!
    nonisolated(unsafe) static let md5MD: OpaquePointer = EVP_MD_fetch(nil, "MD5", nil)!

    static func digest(_ bytes: [UInt8], _ md: OpaquePointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var len: UInt32 = 0
        let ok = bytes.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                // EVP_Digest writes at most EVP_MAX_MD_SIZE bytes, the size of `out`.
                EVP_Digest(
                    src.baseAddress, src.count, dst.baseAddress!.assumingMemoryBound(to: UInt8.self), &len, md, nil)
            }
        }
        precondition(ok == 1, "EVP_Digest failed")
        return Array(out.prefix(Int(len)))
    }

    static func sha1(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, sha1MD) }
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, sha256MD) }

    /// A deterministic byte stream: SHA-256 over (seed, counter). Used where the output must be reproducible
    /// from a seed (RSA primes of the test CA).
    struct HashStream {
        var seed: [UInt8]
        var counter: UInt64 = 0
        mutating func next(_ n: Int) -> [UInt8] {
            var out: [UInt8] = []
            while out.count < n {
                var block = seed
                withUnsafeBytes(of: counter.bigEndian) { block += $0 }
                counter += 1
                out += Crypto.sha256(block)
            }
            return Array(out.prefix(n))
        }
    }
}

// MARK: - Big numbers

/// An owned OpenSSL BIGNUM, freed on deinit.
final class BigNum {
    let bn: OpaquePointer
    init() { bn = BN_new()! }
    init(_ bytes: [UInt8]) { bn = bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil)! } }
    init(word: UInt) {
        bn = BN_new()!
        BN_set_word(bn, word)
    }
    deinit { BN_free(bn) }

    /// Big-endian magnitude, no leading zeros.
    var bytes: [UInt8] {
        let n = (Int(BN_num_bits(bn)) + 7) / 8
        var out = [UInt8](repeating: 0, count: n)
        _ = out.withUnsafeMutableBufferPointer { BN_bn2bin(bn, $0.baseAddress) }
        return out
    }
}

/// RSA keys whose primes come from a seed, so the whole test PKI is reproducible without shipping private keys.
enum DeterministicRSA {
    /// The PKCS #1 `RSAPrivateKey` DER of a 2048-bit key (e = 65537) derived from `seed`.
    static func privateKeyDER(seed: [UInt8], bits: Int = 2048) -> [UInt8] {
        let ctx = BN_CTX_new()!
        defer { BN_CTX_free(ctx) }
        var stream = Crypto.HashStream(seed: seed)
        let e = BigNum(word: 65537)
        let p = prime(bits: bits / 2, stream: &stream, ctx: ctx)
        var q = prime(bits: bits / 2, stream: &stream, ctx: ctx)
        while BN_cmp(p.bn, q.bn) == 0 { q = prime(bits: bits / 2, stream: &stream, ctx: ctx) }
        let n = BigNum()
        BN_mul(n.bn, p.bn, q.bn, ctx)
        let p1 = BigNum()
        BN_sub(p1.bn, p.bn, BN_value_one())
        let q1 = BigNum()
        BN_sub(q1.bn, q.bn, BN_value_one())
        let phi = BigNum()
        BN_mul(phi.bn, p1.bn, q1.bn, ctx)
        let d = BigNum()
        precondition(BN_mod_inverse(d.bn, e.bn, phi.bn, ctx) != nil, "e not invertible")
        let dmp1 = BigNum()
        BN_div(nil, dmp1.bn, d.bn, p1.bn, ctx)
        let dmq1 = BigNum()
        BN_div(nil, dmq1.bn, d.bn, q1.bn, ctx)
        let iqmp = BigNum()
        precondition(BN_mod_inverse(iqmp.bn, q.bn, p.bn, ctx) != nil, "q not invertible mod p")
        return DER.sequence(
            [DER.integer(0)] + [n, e, d, p, q, dmp1, dmq1, iqmp].map { DER.unsignedInteger($0.bytes) })
    }

    /// The first probable prime at or above a seeded odd start with its top two bits set (so p*q has all `2*bits`
    /// bits) and p-1 coprime to 65537.
    private static func prime(bits: Int, stream: inout Crypto.HashStream, ctx: OpaquePointer) -> BigNum {
        var start = stream.next(bits / 8)
        start[0] |= 0xC0
        start[start.count - 1] |= 0x01
        let p = BigNum(start)
        while true {
            if BN_mod_word(p.bn, 65537) != 1 && BN_check_prime(p.bn, ctx, nil) == 1 { return p }
            BN_add_word(p.bn, 2)
        }
    }
}

// MARK: - Private keys

/// An RSA private key held as an OpenSSL `EVP_PKEY`, with its DER forms.
///
/// Signing creates a fresh `EVP_PKEY_CTX` per call, so one key may be shared by several threads.
public final class PrivateKey: @unchecked Sendable {
    let pkey: OpaquePointer
    /// PKCS #1 `RSAPrivateKey` DER.
    public let der: [UInt8]
    /// The `SubjectPublicKeyInfo` DER (what a certificate embeds).
    public let publicKeyInfo: [UInt8]

    /// Loads a PKCS #1 or PKCS #8 private key from DER.
    public init(der: [UInt8]) throws(SynthError) {
        let loaded: OpaquePointer? = der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_AutoPrivateKey(nil, &p, buf.count)
        }
        guard let pkey = loaded else { throw SynthError.openssl("cannot read the RSA private key") }
        self.pkey = pkey
        self.der = der
        let n = i2d_PUBKEY(pkey, nil)
        guard n > 0 else { throw SynthError.openssl("cannot encode the public key") }
        var spki = [UInt8](repeating: 0, count: Int(n))
        spki.withUnsafeMutableBufferPointer { buf in
            var p: UnsafeMutablePointer<UInt8>? = buf.baseAddress
            _ = i2d_PUBKEY(pkey, &p)
        }
        publicKeyInfo = spki
    }

    /// A key of `bits` bits (2048 unless told; a multiple of 16) derived from `seed` (same seed, same key).
    public convenience init(seed: String, bits: Int = 2048) throws(SynthError) {
        try self.init(der: DeterministicRSA.privateKeyDER(seed: Array(seed.utf8), bits: bits))
    }

    /// A fresh random RSA key of `bits` bits with the public exponent `exponent` (big-endian, odd), for tests of
    /// keys no Apple certificate has (a huge exponent). Not reproducible: generated by OpenSSL each time.
    public static func generated(bits: Int, exponent: [UInt8]) throws(SynthError) -> PrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil) else { throw SynthError.openssl("no RSA context") }
        defer { EVP_PKEY_CTX_free(ctx) }
        let e = BN_bin2bn(exponent, Int32(exponent.count), nil)
        defer { BN_free(e) }
        var pkey: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) == 1,
            EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, e) == 1, EVP_PKEY_keygen(ctx, &pkey) == 1, let pkey
        else { throw SynthError.openssl("cannot generate a \(bits)-bit RSA key with that exponent") }
        defer { EVP_PKEY_free(pkey) }
        let n = i2d_PrivateKey(pkey, nil)
        guard n > 0 else { throw SynthError.openssl("cannot encode the generated key") }
        var der = [UInt8](repeating: 0, count: Int(n))
        der.withUnsafeMutableBufferPointer { buf in
            var p: UnsafeMutablePointer<UInt8>? = buf.baseAddress
            _ = i2d_PrivateKey(pkey, &p)
        }
        return try PrivateKey(der: der)
    }

    deinit { EVP_PKEY_free(pkey) }

    /// The length in bytes of this key's signatures (its modulus's length).
    public var signatureSize: Int { Int(EVP_PKEY_get_size(pkey)) }

    /// RSA PKCS #1 v1.5 signature over an already computed `digest` made with `md` (the DigestInfo names `md`).
    /// Deterministic: the same key and digest give the same signature.
    func sign(digest: [UInt8], md: OpaquePointer) -> [UInt8] {
        let ctx = EVP_PKEY_CTX_new(pkey, nil)!
        defer { EVP_PKEY_CTX_free(ctx) }
        precondition(EVP_PKEY_sign_init(ctx) == 1, "EVP_PKEY_sign_init failed")
        precondition(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1, "rsa padding")
        precondition(EVP_PKEY_CTX_set_signature_md(ctx, md) == 1, "signature md")
        var len = 0
        precondition(EVP_PKEY_sign(ctx, nil, &len, digest, digest.count) == 1, "EVP_PKEY_sign size")
        var sig = [UInt8](repeating: 0, count: len)
        precondition(EVP_PKEY_sign(ctx, &sig, &len, digest, digest.count) == 1, "EVP_PKEY_sign failed")
        return Array(sig.prefix(len))
    }

    /// The raw RSA private-key operation on `block` (m^d mod n, no padding): for tests that need a signature
    /// whose decrypted block is exactly `block` (wrong padding, other DigestInfo, trailing bytes). `block` must be
    /// as long as the modulus and, as a big-endian number, smaller than it; `nil` otherwise.
    public func rawPrivateOperation(_ block: [UInt8]) -> [UInt8]? {
        let ctx = EVP_PKEY_CTX_new(pkey, nil)!
        defer {
            EVP_PKEY_CTX_free(ctx)
            ERR_clear_error()
        }
        guard EVP_PKEY_sign_init(ctx) == 1, EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) == 1 else { return nil }
        var len = 0
        guard EVP_PKEY_sign(ctx, nil, &len, block, block.count) == 1 else { return nil }
        var out = [UInt8](repeating: 0, count: len)
        guard EVP_PKEY_sign(ctx, &out, &len, block, block.count) == 1 else { return nil }
        return Array(out.prefix(len))
    }

    /// The public modulus n, big-endian, without leading zero bytes.
    public var modulus: [UInt8] {
        var n: OpaquePointer? = nil
        // "n" is OSSL_PKEY_PARAM_RSA_N; every key here is RSA.
        precondition(EVP_PKEY_get_bn_param(pkey, "n", &n) == 1, "the key has no RSA modulus")
        defer { BN_free(n) }
        var out = [UInt8](repeating: 0, count: (Int(BN_num_bits(n)) + 7) / 8)
        _ = out.withUnsafeMutableBufferPointer { BN_bn2bin(n, $0.baseAddress) }
        return out
    }

    /// SHA-256 with RSA over `data` (certificate signatures).
    func signSHA256(_ data: [UInt8]) -> [UInt8] { sign(digest: Crypto.sha256(data), md: Crypto.sha256MD) }
}
