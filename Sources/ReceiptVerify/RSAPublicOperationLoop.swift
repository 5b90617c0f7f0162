import COpenSSL
import ReceiptDER

/// The verifier's RSA check (`PKCS1Verifier` with the key prepared as the chain cache prepares it: the signature
/// read into a BIGNUM, s < n, the scaled power and its target, the comparison), repeated on one signature: what
/// the benchmark times as the RSA work verify does per receipt, beside OpenSSL's `BN_mod_exp_mont` (the
/// ceiling). One per thread, like `ReceiptVerifier`.
public final class RSAPublicOperationLoop: @unchecked Sendable {
    private let key: RSAPublicKey
    private let verifier = PKCS1Verifier()
    private let signature: [UInt8]
    private let digest: [UInt8]
    private let algorithm: DigestAlgorithm

    /// Nil when `publicKey` (an `EVP_PKEY`) is not an RSA key the verifier handles itself, or `signature` is not
    /// `key`'s valid PKCS #1 v1.5 signature of `digest` under `algorithm`.
    /// - Parameter scaled: false times the plain comparison of s^e mod n with the block instead.
    public init?(
        publicKey: OpaquePointer, signature: [UInt8], digest: [UInt8], algorithm: DigestAlgorithm,
        scaled: Bool = true
    ) {
        guard let key = RSAPublicKey(publicKey) else { return nil }
        self.key = key
        self.signature = signature
        self.digest = digest
        self.algorithm = algorithm
        verifier.usesScaledComparison = scaled
        guard run(1) == 1 else { return nil }
    }

    /// Runs `count` checks; returns how many accepted the signature.
    public func run(_ count: Int) -> Int {
        var ok = 0
        signature.withUnsafeBytes { s in
            digest.withUnsafeBytes { d in
                for _ in 0..<count where verifier.verify(key, signature: s, digest: d, algorithm: algorithm) {
                    ok += 1
                }
            }
        }
        return ok
    }
}
