import COpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An explicitly fetched `EVP_MD`: immutable and refcounted by OpenSSL, so one handle is shared by every thread.
struct DigestHandle: @unchecked Sendable {
    let md: OpaquePointer
    let size: Int
}

/// Digests fetched once per process. Implicit fetches (`EVP_sha256()`) do a provider lookup under a global lock on
/// every init; openssl-notes.md B.3 explains why these are fetched once and never freed.
enum Digests {
    static let sha1: DigestHandle = fetch("SHA1", size: 20)
    static let sha256: DigestHandle = fetch("SHA256", size: 32)

    private static func fetch(_ name: String, size: Int) -> DigestHandle {
        // The default provider always has SHA-1 and SHA-256; without them nothing in this tool can work.
        guard let md = EVP_MD_fetch(nil, name, nil) else { fatalError("OpenSSL has no \(name) digest") }
        return DigestHandle(md: md, size: size)
    }
}

/// Small OpenSSL helpers used on the cache-miss path (they allocate; never call them per receipt).
enum OpenSSL {
    /// Decodes one DER certificate; `nil` when the bytes are not exactly one certificate.
    static func certificate(der bytes: UnsafeRawBufferPointer) -> OpaquePointer? {
        guard let base = bytes.baseAddress, bytes.count > 0, bytes.count <= Int(Int32.max) else { return nil }
        var p: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
        guard let x = d2i_X509(nil, &p, bytes.count) else {
            ERR_clear_error()
            return nil
        }
        // Trailing bytes mean this was not one certificate; treat as unreadable.
        if let end = p, end != base.assumingMemoryBound(to: UInt8.self) + bytes.count {
            X509_free(x)
            return nil
        }
        return x
    }

    /// The DER encoding of a certificate (OpenSSL keeps the bytes it decoded).
    static func der(of x509: OpaquePointer) -> [UInt8] {
        let n = i2d_X509(x509, nil)
        guard n > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: Int(n))
        out.withUnsafeMutableBufferPointer { buf in
            var p = buf.baseAddress
            _ = i2d_X509(x509, &p)
        }
        return out
    }

    /// SHA-256 of `bytes`, lowercase hex.
    static func sha256Hex(_ bytes: UnsafeRawBufferPointer) -> String {
        var digest = SHA256Digest()
        digest.withUnsafeMutableBytes { out in
            var len: UInt32 = 0
            _ = EVP_Digest(bytes.baseAddress, bytes.count, out.baseAddress, &len, Digests.sha256.md, nil)
        }
        return digest.hex
    }

    /// An `ASN1_TIME` as epoch milliseconds; `nil` when OpenSSL cannot read it.
    static func epochMilliseconds(_ t: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let t else { return nil }
        var tm = tm()
        guard ASN1_TIME_to_tm(t, &tm) == 1 else { return nil }
        return Int64(timegm(&tm)) * 1000
    }

    /// A one-line rendering of the certificate's subject (`/C=US/O=.../CN=...`), for messages only.
    static func subjectLine(_ x509: OpaquePointer) -> String {
        guard let name = X509_get_subject_name(x509), let p = X509_NAME_oneline(name, nil, 0) else { return "?" }
        defer { rf_OPENSSL_free(p) }
        return String(cString: p)
    }

    /// The DER encoding of the certificate's issuer Name (the bytes as decoded).
    static func issuerDER(_ x509: OpaquePointer) -> [UInt8] {
        guard let name = X509_get_issuer_name(x509) else { return [] }
        return encode { p in i2d_X509_NAME(name, p) }
    }

    /// The contents octets of the certificate's serial number INTEGER (as a SignerInfo would carry them).
    static func serialContents(_ x509: OpaquePointer) -> [UInt8] {
        guard let serial = X509_get0_serialNumber(x509) else { return [] }
        let tlv = encode { p in i2d_ASN1_INTEGER(serial, p) }
        // Skip the tag and the (short or long form) length; serials are at most 20 octets, so short form in
        // practice, but long form is handled for robustness.
        guard tlv.count >= 2 else { return [] }
        let first = tlv[1]
        let header = first < 0x80 ? 2 : 2 + Int(first & 0x7F)
        guard header <= tlv.count else { return [] }
        return Array(tlv[header...])
    }

    private static func encode(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8] {
        let n = body(nil)
        guard n > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: Int(n))
        out.withUnsafeMutableBufferPointer { buf in
            var p = buf.baseAddress
            _ = body(&p)
        }
        return out
    }

    /// The reason text of the most recent OpenSSL error on this thread, then clears the queue.
    static func takeErrorText() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0, let s = ERR_reason_error_string(code) else { return "no detail from OpenSSL" }
        return String(cString: s)
    }
}
