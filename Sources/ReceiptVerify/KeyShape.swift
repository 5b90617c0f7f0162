import COpenSSL

/// The kinds of public key Apple's certificates carry, checked before any signature made by or over them is
/// verified: a hostile certificate with a huge RSA modulus or public exponent would otherwise cost many times a
/// normal verification, for every record that carries it.
///
/// Apple's receipt chains (Apple Inc. Root, the WWDR intermediates, the receipt signers, Xcode's StoreKit test
/// certificate) hold RSA keys of 2048 bits with public exponent 65537; its JWS chains (Apple Root CA - G3, its
/// intermediate, the leaves) hold EC keys on P-384 and P-256. Accepted: RSA up to 4096 bits with exponent 65537,
/// EC on P-256 or P-384. Everything else is refused, as `unsupported_algorithm`.
enum KeyShape {
    static let maxRSABits: Int32 = 4096
    static let rsaExponent: UInt64 = 65537
    static let curves: Set<String> = ["prime256v1", "secp384r1"]

    /// Why `key` is refused, as a sentence; nil when it has one of the accepted shapes. `whose` names the
    /// certificate in the sentence.
    static func refusal(_ key: OpaquePointer, whose: String) -> String? {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            let bits = EVP_PKEY_get_bits(key)
            guard bits <= maxRSABits else {
                return "\(whose) has a \(bits)-bit RSA key; Apple's keys have at most \(maxRSABits) bits"
            }
            var e: OpaquePointer? = nil
            defer { BN_free(e) }
            guard EVP_PKEY_get_bn_param(key, "e", &e) == 1, let e else {
                ERR_clear_error()
                return "\(whose) has an RSA key whose public exponent cannot be read"
            }
            // BN_get_word returns all ones for a value that does not fit a word.
            let word = BN_get_word(e)
            guard BN_num_bits(e) <= 64, UInt64(word) == rsaExponent else {
                let shown = BN_num_bits(e) <= 64 ? "\(word)" : "of \(BN_num_bits(e)) bits"
                return "\(whose) has an RSA key with public exponent \(shown); Apple's keys use \(rsaExponent)"
            }
            return nil
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var len = 0
            guard EVP_PKEY_get_utf8_string_param(key, "group", &name, name.count, &len) == 1 else {
                ERR_clear_error()
                return "\(whose) has an EC key on an unnamed curve; Apple's keys are on P-256 or P-384"
            }
            let curve = String(decoding: name.prefix(len).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return curves.contains(curve) ? nil : "\(whose) has an EC key on \(curve); Apple's are on P-256 or P-384"
        default:
            return "\(whose) has a key that is neither RSA nor EC"
        }
    }

    /// The first refusal among the keys of `certificates` (decoded X509s), naming the certificate.
    static func refusal(certificates: [OpaquePointer]) -> String? {
        for x in certificates {
            guard let key = X509_get0_pubkey(x) else {
                ERR_clear_error()
                return "the public key of \(OpenSSL.subjectLine(x)) cannot be decoded"
            }
            if let why = refusal(key, whose: "certificate \(OpenSSL.subjectLine(x))") { return why }
        }
        return nil
    }
}

extension KeyShape {
    /// The refusal of one DER certificate's key; nil when the key is accepted, or when the bytes are not a
    /// certificate (the chain check reports that).
    static func refusal(certificateDER bytes: UnsafeRawBufferPointer) -> String? {
        guard let x = OpenSSL.certificate(der: bytes) else { return nil }
        defer { X509_free(x) }
        return refusal(certificates: [x])
    }
}
