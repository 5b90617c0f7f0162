#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// JSON string escapes, resolved without allocating.
public enum JSONString {
    /// Writes the unescaped bytes of the string contents `raw` (between the quotes, already validated by the
    /// scanner) into `out`, whose size must be at least `raw.count` (no escape expands). Returns the byte count.
    /// `\uXXXX` becomes UTF-8; a lone surrogate becomes U+FFFD.
    public static func unescape(_ raw: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int {
        precondition(out.count >= raw.count)
        var i = 0
        var o = 0
        let n = raw.count
        // In range throughout: i < n is checked before each read, the scanner guarantees complete escapes, and
        // each escape of k input bytes writes at most k output bytes, so o <= i <= n <= out.count.
        guard let src = raw.baseAddress, let dst = out.baseAddress else { return 0 }
        while i < n {
            let b = raw[i]
            if b != 0x5C {
                // The whole run up to the next backslash in one copy (line-wrapped base64 has 76-byte runs).
                // In range: run <= n - i, and o <= i, so o + run <= n <= out.count; the buffers do not overlap.
                let run = memchr(src + i, 0x5C, n - i).map { src.distance(to: UnsafeRawPointer($0)) - i } ?? (n - i)
                memcpy(dst + o, src + i, run)
                o += run
                i += run
                continue
            }
            let e = i + 1 < n ? raw[i + 1] : 0
            i += 2
            switch e {
            case UInt8(ascii: "n"): out[o] = 0x0A
            case UInt8(ascii: "r"): out[o] = 0x0D
            case UInt8(ascii: "t"): out[o] = 0x09
            case UInt8(ascii: "b"): out[o] = 0x08
            case UInt8(ascii: "f"): out[o] = 0x0C
            case UInt8(ascii: "u"):
                var cp = hex4(raw, i)
                i += 4
                if (0xD800..<0xDC00).contains(cp) {
                    // A high surrogate: combine with a following `\uDC00`...`\uDFFF`, else it stands alone.
                    if i + 6 <= n && raw[i] == 0x5C && raw[i + 1] == UInt8(ascii: "u") {
                        let lo = hex4(raw, i + 2)
                        if (0xDC00..<0xE000).contains(lo) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                            i += 6
                        } else {
                            cp = 0xFFFD
                        }
                    } else {
                        cp = 0xFFFD
                    }
                } else if (0xDC00..<0xE000).contains(cp) {
                    cp = 0xFFFD
                }
                o += utf8(cp, out, o)
                continue
            default: out[o] = e  // `\"`, `\\`, `\/`
            }
            o += 1
        }
        return o
    }

    /// True when the string contents `raw` unescape to exactly `target`.
    public static func equals(_ raw: UnsafeRawBufferPointer, escaped: Bool, _ target: [UInt8]) -> Bool {
        if !escaped {
            guard raw.count == target.count else { return false }
            return target.withUnsafeBytes { t in memcmpEqual(raw, t) }
        }
        // Escapes never expand, so an escaped key equal to `target` is at most 12x as long (`\uD83D\uDE00` -> 4).
        guard raw.count <= target.count * 12, raw.count <= 4096 else { return false }
        return withUnsafeTemporaryAllocation(byteCount: max(raw.count, 1), alignment: 1) { tmp in
            let n = unescape(raw, into: tmp)
            guard n == target.count else { return false }
            return target.withUnsafeBytes { t in memcmpEqual(UnsafeRawBufferPointer(rebasing: tmp[0..<n]), t) }
        }
    }

    static func memcmpEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }

    static func hex4(_ raw: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        var v: UInt32 = 0
        for k in 0..<4 { v = v << 4 | UInt32(hexValue(raw[at + k])) }
        return v
    }

    @inline(__always) static func hexValue(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return 0xFF
        }
    }

    /// Encodes `cp` as UTF-8 at `out[o...]`; returns the byte count (at most 4, within the 6 or 12 escape bytes).
    static func utf8(_ cp: UInt32, _ out: UnsafeMutableRawBufferPointer, _ o: Int) -> Int {
        switch cp {
        case 0..<0x80:
            out[o] = UInt8(cp)
            return 1
        case 0x80..<0x800:
            out[o] = UInt8(0xC0 | cp >> 6)
            out[o + 1] = UInt8(0x80 | cp & 0x3F)
            return 2
        case 0x800..<0x10000:
            out[o] = UInt8(0xE0 | cp >> 12)
            out[o + 1] = UInt8(0x80 | (cp >> 6) & 0x3F)
            out[o + 2] = UInt8(0x80 | cp & 0x3F)
            return 3
        default:
            out[o] = UInt8(0xF0 | cp >> 18)
            out[o + 1] = UInt8(0x80 | (cp >> 12) & 0x3F)
            out[o + 2] = UInt8(0x80 | (cp >> 6) & 0x3F)
            out[o + 3] = UInt8(0x80 | cp & 0x3F)
            return 4
        }
    }
}
