/// UTF-8 validation for attribute strings (rejects overlongs, surrogates, values past U+10FFFF, and NUL).
public enum UTF8Check {
    public static func isValidText(_ s: UnsafeRawBufferPointer) -> Bool {
        let n = s.count
        var i = 0
        // Receipt strings are mostly ASCII: eight octets per step while they are, one character otherwise.
        while i + 8 <= n {
            if isASCIIWithoutNUL(s.loadUnaligned(fromByteOffset: i, as: UInt64.self)) {  // i + 8 <= n
                i += 8
                continue
            }
            let len = character(s, at: i)
            guard len > 0 else { return false }
            i += len
        }
        // The last 1 to 7 octets: one more word, ending at `n`. Its first octets belong to characters already
        // accepted, so checking them again as ASCII can only send a valid tail to the loop below, never pass an
        // invalid one.
        if i < n && n >= 8 && isASCIIWithoutNUL(s.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)) {
            return true
        }
        while i < n {
            let len = character(s, at: i)
            guard len > 0 else { return false }
            i += len
        }
        return true
    }

    /// True when none of the eight octets of `w` has its top bit set or is zero. Subtracting 0x01 from each
    /// octet borrows into a top bit exactly when some octet is zero (the lowest zero octet becomes 0xFF).
    @inline(__always) static func isASCIIWithoutNUL(_ w: UInt64) -> Bool { nonASCIIOrNUL(w) == 0 }

    /// The top bits of `isASCIIWithoutNUL`'s test: zero exactly when it holds (callers or several words' flags).
    @inline(__always) static func nonASCIIOrNUL(_ w: UInt64) -> UInt64 {
        (w | (w &- 0x0101_0101_0101_0101)) & 0x8080_8080_8080_8080
    }

    /// The length of the valid character at `i` (`i < s.count`), or 0 when it is invalid or NUL.
    @inline(__always) static func character(_ s: UnsafeRawBufferPointer, at i: Int) -> Int {
        let b = s[i]
        if b < 0x80 { return b == 0 ? 0 : 1 }
        let len: Int
        var cp: UInt32
        switch b {
        case 0xC2...0xDF: len = 2; cp = UInt32(b & 0x1F)
        case 0xE0...0xEF: len = 3; cp = UInt32(b & 0x0F)
        case 0xF0...0xF4: len = 4; cp = UInt32(b & 0x07)
        default: return 0
        }
        guard i + len <= s.count else { return 0 }
        for k in 1..<len {
            let c = s[i + k]
            guard c & 0xC0 == 0x80 else { return 0 }
            cp = (cp << 6) | UInt32(c & 0x3F)
        }
        if len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) { return 0 }
        if len == 4 && (cp < 0x10000 || cp > 0x10FFFF) { return 0 }
        return len
    }
}
