import COpenSSL

/// ECDSA with a nonce derived from the key and the message instead of drawn at random, so that the same payload
/// signed by the same test key gives the same JWS (OpenSSL 3.0 has no deterministic ECDSA of its own). Every
/// operation on numbers and points is OpenSSL's; only the order of the steps is written here. For test keys only.
enum DeterministicECDSA {
    /// The raw `r || s` signature of `message` under `pkey` (an EC key on `curve`), with the curve's hash.
    static func sign(_ message: [UInt8], pkey: OpaquePointer, curve: ECKey.Curve) -> [UInt8] {
        let size = curve.scalarBytes
        let nid = curve == .p256 ? NID_X9_62_prime256v1 : NID_secp384r1
        guard let group = EC_GROUP_new_by_curve_name(nid), let ctx = BN_CTX_new(), let point = EC_POINT_new(group)
        else { preconditionFailure("OpenSSL cannot make an EC group") }
        defer {
            EC_POINT_free(point)
            BN_CTX_free(ctx)
            EC_GROUP_free(group)
        }
        let order = EC_GROUP_get0_order(group)
        // OSSL_PKEY_PARAM_PRIV_KEY (a macro of core_names.h, which the module map does not include).
        var d: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pkey, "priv", &d) == 1, let d else {
            preconditionFailure("OpenSSL cannot read the EC private key")
        }
        defer { BN_clear_free(d) }
        let digest = hash(message, curve.digestName)
        var secret = [UInt8](repeating: 0, count: size)
        _ = BN_bn2binpad(d, &secret, Int32(size))

        let bns = (0..<7).map { _ in BN_new()! }
        defer { bns.forEach { BN_clear_free($0) } }
        let (k, x, r, kinv, e, t, s) = (bns[0], bns[1], bns[2], bns[3], bns[4], bns[5], bns[6])
        // The digest is as long as the order (SHA-256 for P-256, SHA-384 for P-384): no truncation.
        _ = BN_bin2bn(digest, Int32(digest.count), e)
        var counter: UInt8 = 0
        while true {
            // k = SHA-512(secret || digest || counter) mod n, retried in the (negligible) case of a zero r or s.
            let seed = hash(secret + digest + [counter], "SHA512")
            counter &+= 1
            _ = BN_bin2bn(seed, Int32(seed.count), t)
            guard BN_nnmod(k, t, order, ctx) == 1, BN_is_zero(k) == 0 else { continue }
            guard EC_POINT_mul(group, point, k, nil, nil, ctx) == 1,
                EC_POINT_get_affine_coordinates(group, point, x, nil, ctx) == 1,
                BN_nnmod(r, x, order, ctx) == 1, BN_is_zero(r) == 0
            else { continue }
            // s = k^-1 (e + r d) mod n
            guard BN_mod_inverse(kinv, k, order, ctx) != nil, BN_mod_mul(t, r, d, order, ctx) == 1,
                BN_mod_add(t, t, e, order, ctx) == 1, BN_mod_mul(s, kinv, t, order, ctx) == 1, BN_is_zero(s) == 0
            else { continue }
            var out = [UInt8](repeating: 0, count: 2 * size)
            out.withUnsafeMutableBufferPointer { buf in
                _ = BN_bn2binpad(r, buf.baseAddress, Int32(size))
                _ = BN_bn2binpad(s, buf.baseAddress! + size, Int32(size))
            }
            return out
        }
    }

    /// A private scalar in [1, n) derived from `seed`, as `curve.scalarBytes` big-endian bytes.
    static func scalar(from seed: [UInt8], curve: ECKey.Curve) -> [UInt8] {
        let nid = curve == .p256 ? NID_X9_62_prime256v1 : NID_secp384r1
        guard let group = EC_GROUP_new_by_curve_name(nid), let ctx = BN_CTX_new(), let h = BN_new(),
            let d = BN_new()
        else { preconditionFailure("OpenSSL cannot make an EC group") }
        defer {
            BN_clear_free(d)
            BN_clear_free(h)
            BN_CTX_free(ctx)
            EC_GROUP_free(group)
        }
        var counter: UInt8 = 0
        while true {
            let digest = hash(seed + [counter], "SHA512")
            counter &+= 1
            _ = BN_bin2bn(digest, Int32(digest.count), h)
            guard BN_nnmod(d, h, EC_GROUP_get0_order(group), ctx) == 1, BN_is_zero(d) == 0 else { continue }
            var out = [UInt8](repeating: 0, count: curve.scalarBytes)
            _ = BN_bn2binpad(d, &out, Int32(out.count))
            return out
        }
    }

    /// The digest of `bytes` with OpenSSL's `name` algorithm.
    static func hash(_ bytes: [UInt8], _ name: String) -> [UInt8] {
        let md = EVP_MD_fetch(nil, name, nil)
        defer { EVP_MD_free(md) }
        var out = [UInt8](repeating: 0, count: 64)
        var len: UInt32 = 0
        precondition(EVP_Digest(bytes, bytes.count, &out, &len, md, nil) == 1, "EVP_Digest \(name) failed")
        return Array(out.prefix(Int(len)))
    }
}
