/// The base64url alphabet of JWS segments (RFC 7515 section 2: URL-safe alphabet, no padding).
enum Base64URL {
    /// Each byte's 6-bit value, 0xFF outside the URL-safe alphabet.
    private static let values: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (v, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            t[Int(c)] = UInt8(v)
        }
        return t
    }()

    /// The bytes a base64url segment encodes; `nil` when it is empty, holds a byte outside the URL-safe alphabet
    /// (padding included), or has a length no encoding produces.
    static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        // A length of 1 mod 4 cannot come from any byte string.
        guard !text.isEmpty, text.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(text.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for b in text {
            let v = values[Int(b)]
            guard v != 0xFF else { return nil }
            acc = (acc << 6) | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        return out
    }
}
