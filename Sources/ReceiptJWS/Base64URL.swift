import Foundation

/// The base64url alphabet of JWS segments (RFC 7515 section 2: URL-safe alphabet, no padding).
enum Base64URL {
    /// The bytes a base64url segment encodes; `nil` when it is empty, holds a byte outside the URL-safe alphabet,
    /// carries padding, or has a length no encoding produces.
    static func decode(_ segment: Substring.UTF8View) -> [UInt8]? {
        // A length of 1 mod 4 cannot come from any byte string.
        guard !segment.isEmpty, segment.count % 4 != 1 else { return nil }
        var standard = [UInt8]()
        standard.reserveCapacity(segment.count + 3)
        for b in segment {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(b)
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        guard let data = Data(base64Encoded: Data(standard)) else { return nil }
        return [UInt8](data)
    }
}
