/// Recognises a StoreKit 2 JWS (a signed transaction, renewal or notification: `eyJ...`) where a receipt was
/// expected, so that it gets its own error code instead of a generic base64 failure.
///
/// A JWS in compact form is three base64url segments joined by `.`; its first segment (the protected header)
/// decodes to a JSON object. Only that shape is checked: nothing is verified or parsed beyond the header's `{`.
public enum JWSDetector {
    /// The detail written for such a record.
    public static let detail: StaticString = """
        the receipt field holds a StoreKit 2 JWS (signed transaction or notification), which this version does \
        not read as a receipt
        """

    /// True when `text` (surrounding ASCII whitespace allowed) is three non-empty base64url segments separated by
    /// two dots and the first one decodes to text starting with `{`.
    public static func isJWS(_ text: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        var end = text.count
        while start < end && isSpace(text[start]) { start += 1 }
        while end > start && isSpace(text[end - 1]) { end -= 1 }
        var dots: [Int] = []
        var i = start
        while i < end {
            let c = text[i]
            if c == UInt8(ascii: ".") {
                dots.append(i)
                if dots.count > 2 { return false }
            } else if !isBase64URL(c) {
                return false
            }
            i += 1
        }
        guard dots.count == 2, dots[0] > start, dots[1] > dots[0] + 1, end > dots[1] + 1 else { return false }
        return headerStartsObject(UnsafeRawBufferPointer(rebasing: text[start..<dots[0]]))
    }

    /// Decodes the first few characters of the header segment: its first non-space byte must be `{`.
    private static func headerStartsObject(_ segment: UnsafeRawBufferPointer) -> Bool {
        let prefix = min(segment.count, 16) & ~3
        guard prefix >= 4 else { return false }
        var acc: UInt32 = 0
        var have = 0
        for k in 0..<prefix {
            guard let v = sextet(segment[k]) else { return false }
            acc = acc << 6 | UInt32(v)
            have += 1
            if have == 4 {
                for shift in [16, 8, 0] {
                    let byte = UInt8(truncatingIfNeeded: acc >> UInt32(shift))
                    if isSpace(byte) { continue }
                    return byte == UInt8(ascii: "{")
                }
                acc = 0
                have = 0
            }
        }
        return false
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A }

    private static func isBase64URL(_ c: UInt8) -> Bool { sextet(c) != nil || c == UInt8(ascii: "=") }

    private static func sextet(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
