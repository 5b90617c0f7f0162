/// JSON scalar literals appended to byte buffers, without Foundation: the one place the product turns strings and
/// numbers into JSON text. `JSONWriter` lays out objects and arrays around them; `JSONDocument` builds whole documents.
///
/// Strings: `"` and `\` are escaped, control characters become `\b`, `\f`, `\n`, `\r`, `\t` or `\u00XX`; everything
/// else is copied as UTF-8, `/`, U+2028 and U+2029 included (valid JSON; only pre-2019 JavaScript `eval` minded).
/// Invalid UTF-8 in a byte string becomes U+FFFD, one per maximal ill-formed subsequence, exactly as
/// `String(decoding:as: UTF8.self)` repairs it, so the output is always valid UTF-8 and valid JSON.
///
/// Numbers: integers exactly; finite doubles in the shortest text that reads back as the same double (integral
/// values below 2^53 without a fraction: `6`, not `6.0`); a non-finite double, which JSON cannot express, is `null`.
public enum JSONText {
    @usableFromInline static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    // MARK: - Strings

    /// Appends `s` as a JSON string literal.
    // Inlinable: the verifyReceipt NDJSON writer and the table writers (other modules) call it for every string.
    @inlinable public static func appendString(_ s: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        let n = s.count
        while i < n {
            let b = s[i]
            // The common byte: printable ASCII other than the two that need escaping.
            if b >= 0x20 && b < 0x80 && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\") {
                i &+= 1  // i < n <= Int.max
                continue
            }
            if b >= 0x80 {
                let length = validSequenceLength(s, at: i)
                if length > 0 {
                    i &+= length  // i + length <= n: validSequenceLength checked it
                    continue
                }
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: s[runStart..<i]))  // runStart <= i < n
            if b >= 0x80 {
                out.append(contentsOf: [0xEF, 0xBF, 0xBD])  // U+FFFD
                i += illFormedLength(s, at: i)
            } else {
                appendEscape(b, into: &out)
                i += 1
            }
            runStart = i
        }
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: s[runStart..<n]))
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `s` as a JSON string literal (a `String` is valid UTF-8, so nothing is replaced).
    @inlinable public static func appendString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { appendString(UnsafeRawBufferPointer($0), into: &out) }
    }

    /// Appends `["a","b"]`.
    public static func appendStringArray(_ a: [String], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, s) in a.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            appendString(s, into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    @usableFromInline static func appendEscape(_ b: UInt8, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch b {
        case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        default: out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]])
        }
    }

    // MARK: - UTF-8 (Unicode 15, table 3-7)

    /// The length of the well-formed sequence starting with the non-ASCII byte at `i`, or 0 when it is ill-formed.
    @usableFromInline static func validSequenceLength(_ s: UnsafeRawBufferPointer, at i: Int) -> Int {
        let (length, valid) = scan(s, at: i)
        return valid ? length : 0
    }

    /// How many bytes one U+FFFD replaces: the maximal prefix of a well-formed sequence (at least 1 byte).
    @usableFromInline static func illFormedLength(_ s: UnsafeRawBufferPointer, at i: Int) -> Int {
        max(scan(s, at: i).length, 1)
    }

    /// Follows the sequence starting at `s[i]` (a byte >= 0x80): how many bytes belong to it and whether it is
    /// complete and well-formed. An invalid lead byte gives (0, false); a truncated or broken sequence gives the
    /// length of its maximal valid prefix and false.
    private static func scan(_ s: UnsafeRawBufferPointer, at i: Int) -> (length: Int, valid: Bool) {
        let lead = s[i]
        let need: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: need = 1
        case 0xE0:
            need = 2
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: need = 2
        case 0xED:
            need = 2
            high = 0x9F
        case 0xF0:
            need = 3
            low = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4:
            need = 3
            high = 0x8F
        default: return (0, false)
        }
        var k = 1
        while k <= need {
            guard i + k < s.count else { return (k, false) }
            let c = s[i + k]
            // Only the first continuation byte has the narrowed range.
            let lo: UInt8 = k == 1 ? low : 0x80
            let hi: UInt8 = k == 1 ? high : 0xBF
            guard c >= lo && c <= hi else { return (k, false) }
            k += 1
        }
        return (k, true)
    }

    // MARK: - Numbers and literals

    /// Appends `v` in decimal.
    @inlinable public static func appendInteger(_ v: Int64, into out: inout [UInt8]) {
        DecimalText.append(v, into: &out)
    }

    /// Appends `v` in decimal.
    @inlinable public static func appendInteger(_ v: UInt64, into out: inout [UInt8]) {
        DecimalText.append(v, into: &out)
    }

    /// Appends `v`: the shortest text that reads back as `v`, integral values below 2^53 as integers, and `null`
    /// for infinities and NaN.
    public static func appendDouble(_ v: Double, into out: inout [UInt8]) {
        guard v.isFinite else {
            appendNull(into: &out)
            return
        }
        if v == v.rounded(.towardZero) && v.magnitude < 9_007_199_254_740_992 {
            if v == 0 && v.sign == .minus { out.append(UInt8(ascii: "-")) }
            DecimalText.append(Int64(v), into: &out)  // |v| < 2^53: exact in Int64
            return
        }
        // Swift's description is the shortest round-trip form: digits, `.`, `e`, `+`, `-` only, all valid JSON.
        out.append(contentsOf: v.description.utf8)
    }

    /// Appends `true` or `false`.
    @inlinable public static func appendBool(_ v: Bool, into out: inout [UInt8]) {
        out.append(contentsOf: v ? "true".utf8 : "false".utf8)
    }

    /// Appends `null`.
    @inlinable public static func appendNull(into out: inout [UInt8]) { out.append(contentsOf: "null".utf8) }
}
