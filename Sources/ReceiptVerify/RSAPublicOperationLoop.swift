import COpenSSL

/// The verifier's RSA public operation (`MontgomeryPower` with the key prepared as the chain cache prepares it),
/// repeated on one signature: what the benchmark times as the RSA work verify does per receipt, beside OpenSSL's
/// `BN_mod_exp_mont` (the ceiling). One per thread, like `ReceiptVerifier`.
public final class RSAPublicOperationLoop: @unchecked Sendable {
    private let key: RSAPublicKey
    private let ctx: OpaquePointer
    private let power: MontgomeryPower
    private let s: OpaquePointer
    private let m: OpaquePointer

    /// Nil when `publicKey` (an `EVP_PKEY`) is not an RSA key the verifier handles itself, or `signature` is not
    /// below its modulus.
    public init?(publicKey: OpaquePointer, signature: [UInt8]) {
        guard let key = RSAPublicKey(publicKey), signature.count == key.byteCount,
            let ctx = BN_CTX_new(), let s = BN_bin2bn(signature, Int32(signature.count), nil), let m = BN_new()
        else { return nil }
        self.key = key
        self.ctx = ctx
        self.s = s
        self.m = m
        power = MontgomeryPower(ctx: ctx)
        guard BN_ucmp(s, key.n) < 0 else { return nil }
    }

    deinit {
        BN_free(s)
        BN_free(m)
        BN_CTX_free(ctx)
    }

    /// Runs `count` operations; returns how many succeeded.
    public func run(_ count: Int) -> Int {
        var ok = 0
        for _ in 0..<count where power.power(m, s, key) { ok += 1 }
        return ok
    }
}
