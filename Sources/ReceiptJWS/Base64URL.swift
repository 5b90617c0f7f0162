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
        let full = text.count / 4
        let tail = text.count % 4
        let count = full * 3 + (tail == 0 ? 0 : tail - 1)
        var valid = true
        let out = values.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                var i = 0
                var o = 0
                // Four characters to three bytes; a byte outside the alphabet sets the top bit of `bad`.
                var bad: UInt8 = 0
                for _ in 0..<full {
                    let a = table[Int(text[i])]
                    let b = table[Int(text[i + 1])]
                    let c = table[Int(text[i + 2])]
                    let d = table[Int(text[i + 3])]
                    bad |= a | b | c | d
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[o] = UInt8(truncatingIfNeeded: v >> 16)
                    buffer[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    buffer[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                if tail > 0 {
                    // Two characters give one byte, three give two.
                    var v: UInt32 = 0
                    for k in 0..<tail {
                        let x = table[Int(text[i + k])]
                        bad |= x
                        v = v << 6 | UInt32(x)
                    }
                    v <<= UInt32(6 * (4 - tail))
                    buffer[o] = UInt8(truncatingIfNeeded: v >> 16)
                    if tail == 3 { buffer[o + 1] = UInt8(truncatingIfNeeded: v >> 8) }
                }
                valid = bad & 0x80 == 0
                initialized = count
            }
        }
        return valid ? out : nil
    }
}
