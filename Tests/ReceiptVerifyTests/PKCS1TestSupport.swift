import COpenSSL
import ReceiptDER
import ReceiptSynth

@testable import ReceiptVerify

/// A signing key of the test PKI with everything the RSA tests need: the private key (for raw RSA on crafted
/// blocks), the public key as OpenSSL's `EVP_PKEY` (given to the reference check and to `PKCS1Verifier`, the one
/// under test), and the modulus.
final class RSATestKey: @unchecked Sendable {
    let key: PrivateKey
    let evp: OpaquePointer
    let modulus: [UInt8]
    var k: Int { modulus.count }

    init(_ key: PrivateKey, certificate: [UInt8]) {
        self.key = key
        let x509 = certificate.withUnsafeBytes { OpenSSL.certificate(der: $0) }!
        evp = X509_get_pubkey(x509)!
        X509_free(x509)
        modulus = key.modulus
    }

    deinit { EVP_PKEY_free(evp) }

    /// The genuine test leaf (RSA-2048, e = 65537).
    static let leaf: RSATestKey = {
        let id = TestCA.pki.identity(.valid)
        return RSATestKey(id.key, certificate: id.leaf.der)
    }()

    /// OpenSSL's verdict: `EVP_PKEY_verify` with PKCS #1 v1.5 padding over `digest` made with `algorithm`, through a
    /// fresh context (the verifier under test keeps its contexts).
    func opensslAccepts(_ signature: [UInt8], digest: [UInt8], _ algorithm: DigestAlgorithm) -> Bool {
        let ctx = EVP_PKEY_CTX_new_from_pkey(nil, evp, nil)!
        defer {
            EVP_PKEY_CTX_free(ctx)
            ERR_clear_error()
        }
        let md = algorithm == .sha1 ? Digests.sha1.md : Digests.sha256.md
        precondition(EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, md) == 1)
        return EVP_PKEY_verify(ctx, signature, signature.count, digest, digest.count) == 1
    }

    /// The verifier under test on the same inputs.
    func pkcs1Accepts(
        _ signature: [UInt8], digest: [UInt8], _ algorithm: DigestAlgorithm, with verifier: PKCS1Verifier
    ) -> Bool {
        signature.withUnsafeBytes { s in
            digest.withUnsafeBytes { d in verifier.verify(evp, signature: s, digest: d, algorithm: algorithm) }
        }
    }

    /// The signature whose decrypted block is `block` (raw RSA with the private key); nil when block >= n.
    func sign(block: [UInt8]) -> [UInt8]? { key.rawPrivateOperation(block) }
}

/// EMSA-PKCS1-v1_5 blocks built here from the ASN.1 (with ReceiptSynth's DER writer), independently of the
/// constants in `DigestInfo`, so the tests do not take their expectations from the code under test.
enum PKCS1Block {
    static func oid(_ algorithm: DigestAlgorithm) -> String {
        algorithm == .sha1 ? "1.3.14.3.2.26" : "2.16.840.1.101.3.4.2.1"
    }

    /// DigestInfo ::= SEQUENCE { AlgorithmIdentifier, OCTET STRING digest }.
    static func digestInfo(_ algorithmOID: String, _ digest: [UInt8], nullParameters: Bool = true) -> [UInt8] {
        DER.sequence([DER.algorithm(algorithmOID, nullParameters: nullParameters), DER.octetString(digest)])
    }

    /// 00 01 FF..FF 00 || t, k bytes in all (t.count <= k - 3).
    static func pad(_ t: [UInt8], k: Int) -> [UInt8] {
        [0x00, 0x01] + [UInt8](repeating: 0xFF, count: k - t.count - 3) + [0x00] + t
    }

    /// The one valid block for `digest`.
    static func valid(_ digest: [UInt8], _ algorithm: DigestAlgorithm, k: Int) -> [UInt8] {
        pad(digestInfo(oid(algorithm), digest), k: k)
    }
}
