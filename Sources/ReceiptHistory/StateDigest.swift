import COpenSSL

/// SHA-256 over a stream of bytes, by OpenSSL's EVP interface: the checksum of a history state file.
final class StateDigest {
    private let context: OpaquePointer

    init() {
        // Allocation and initialisation fail only when memory is exhausted.
        context = EVP_MD_CTX_new()!
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The 32-byte digest; the digest cannot be updated afterwards.
    func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // EVP_DigestFinal_ex writes at most EVP_MAX_MD_SIZE bytes, the size of `out`.
        out.withUnsafeMutableBufferPointer { p in _ = EVP_DigestFinal_ex(context, p.baseAddress, &length) }
        return Array(out.prefix(Int(length)))
    }
}

/// Lowercase hexadecimal.
func hexText(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
