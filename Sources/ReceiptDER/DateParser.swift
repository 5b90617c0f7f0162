import ReceiptModel

/// The result of reading a receipt date string.
public enum ParsedDate: Sendable, Equatable {
    /// The empty string: Apple's way of saying "no such date" (1708 for non-subscriptions, 1712 when not cancelled).
    case absent
    /// Epoch milliseconds, UTC.
    case millis(Int64)
    /// Not a date in any form receipts use.
    case invalid
}

/// Parses the date forms receipts carry (receipt-format.md section 4) without Foundation:
/// `YYYY-MM-DDTHH:MM:SSZ`, fractional seconds (`.686Z`, 1 to 9 digits), numeric offsets (`+0300`, `-08:00`),
/// the `4001-01-01T00:00:00Z` sentinel, and the empty string (absent).
public enum DateParser {
    public static func parse(_ s: UnsafeRawBufferPointer) -> ParsedDate {
        let n = s.count
        if n == 0 { return .absent }
        guard n >= 20 && n <= 40 else { return .invalid }
        // `YYYY-MM-DDTHH:MM:SS` in three overlapping words (octets 0..<8, 8..<16, 11..<19; n >= 20), each checked
        // at once: digits where digits belong, the separators exactly, then the numbers from the digit pairs.
        guard
            let f = fixedPrefix(
                UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 11, as: UInt64.self)))
        else { return .invalid }
        let (year, month, day, hour, minute, second) = f
        guard month >= 1, month <= 12, day >= 1, hour <= 23, minute <= 59, second <= 60 else { return .invalid }
        guard day <= CivilTime.daysInMonth(year: year, month: month) else { return .invalid }
        // Reads `count` decimal digits at `at`; -1 when any is not a digit. `at + count <= n` is checked by callers.
        @inline(__always) func digits(_ at: Int, _ count: Int) -> Int {
            var v = 0
            for i in at..<(at + count) {
                let d = Int(s[i]) &- 48
                guard d >= 0 && d <= 9 else { return -1 }
                v = v * 10 + d  // at most 4 digits: no overflow
            }
            return v
        }
        var p = 19
        var millis = 0
        if s[p] == UInt8(ascii: ".") {
            p += 1
            var scale = 100
            let start = p
            while p < n, s[p] >= 48, s[p] <= 57 {
                millis += Int(s[p] - 48) * scale  // digits past the third add 0 (scale reaches 0)
                scale /= 10
                p += 1
            }
            guard p > start, p - start <= 9 else { return .invalid }
        }
        guard p < n else { return .invalid }
        var offsetMinutes = 0
        switch s[p] {
        case UInt8(ascii: "Z"):
            p += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = s[p] == UInt8(ascii: "+") ? 1 : -1
            p += 1
            guard p + 4 <= n else { return .invalid }
            let hh = digits(p, 2)
            var q = p + 2
            if q < n, s[q] == UInt8(ascii: ":") { q += 1 }
            guard q + 2 <= n else { return .invalid }
            let mm = digits(q, 2)
            guard hh >= 0, hh <= 23, mm >= 0, mm <= 59 else { return .invalid }
            offsetMinutes = sign * (hh * 60 + mm)
            p = q + 2
        default:
            return .invalid
        }
        guard p == n else { return .invalid }
        // Years 0...9999: |days| < 2^22, so seconds stay below 2^39 and milliseconds below 2^49.
        let days = CivilTime.days(year: year, month: month, day: day)
        let seconds = ((days &* 24 &+ hour) &* 60 &+ minute) &* 60 &+ second &- offsetMinutes &* 60
        return .millis(Int64(seconds) &* 1000 &+ Int64(millis))
    }

    /// Year, month, day, hour, minute and second of `YYYY-MM-DD?HH:MM:SS` (`?` is `T` or a space), from the
    /// little-endian words of octets 0..<8, 8..<16 and 11..<19; nil unless every digit and separator is in place.
    @inline(__always)
    static func fixedPrefix(_ w0: UInt64, _ w1: UInt64, _ w2: UInt64) -> (Int, Int, Int, Int, Int, Int)? {
        // Separators: octets 4 and 7 are '-' (w0), 10 is 'T' or ' ' and 13 is ':' (w1), 16 is ':' (w2).
        let sep0: UInt64 = 0xFF00_00FF_0000_0000
        let sep1: UInt64 = 0x0000_FF00_00FF_0000
        let sep2: UInt64 = 0x0000_FF00_0000_0000
        let t = w1 & 0x0000_0000_00FF_0000
        guard w0 & sep0 == 0x2D00_002D_0000_0000, w1 & sep1 & ~0x0000_0000_00FF_0000 == 0x0000_3A00_0000_0000,
            t == 0x0000_0000_0054_0000 || t == 0x0000_0000_0020_0000, w2 & sep2 == 0x0000_3A00_0000_0000
        else { return nil }
        // Digits: XOR with '0' leaves 0...9 in a digit octet; adding 0x76 then sets its top bit exactly when it was
        // more than 9, and the octet's own top bit catches values from 0x80. Other octets are masked to zero first,
        // so nothing carries into a digit octet from a valid one.
        let dig0: UInt64 = 0x00FF_FF00_FFFF_FFFF  // YYYY, MM
        let dig1: UInt64 = 0xFFFF_00FF_FF00_FFFF  // DD, HH, MM
        let dig2: UInt64 = 0xFFFF_0000_0000_0000  // SS
        let d0 = (w0 ^ 0x3030_3030_3030_3030) & dig0
        let d1 = (w1 ^ 0x3030_3030_3030_3030) & dig1
        let d2 = (w2 ^ 0x3030_3030_3030_3030) & dig2
        let bad =
            (d0 | (d0 &+ 0x7676_7676_7676_7676)) | (d1 | (d1 &+ 0x7676_7676_7676_7676))
            | (d2 | (d2 &+ 0x7676_7676_7676_7676))
        guard bad & 0x8080_8080_8080_8080 == 0 else { return nil }
        // Octet k of `pairs` = 10 * digit k + digit k+1 (at most 99: no carry between octets).
        let p0 = d0 &* 10 &+ (d0 >> 8)
        let p1 = d1 &* 10 &+ (d1 >> 8)
        let p2 = d2 &* 10 &+ (d2 >> 8)
        @inline(__always) func octet(_ w: UInt64, _ k: Int) -> Int { Int(truncatingIfNeeded: (w >> (8 * k)) & 0xFF) }
        return (
            octet(p0, 0) * 100 + octet(p0, 2), octet(p0, 5), octet(p1, 0), octet(p1, 3), octet(p1, 6), octet(p2, 6)
        )
    }

    /// Parses an X.509 UTCTime (`YYMMDDHHMMSSZ`, years 1950-2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`).
    public static func parseCertificateTime(_ s: UnsafeRawBufferPointer, generalized: Bool) -> Int64? {
        let yearDigits = generalized ? 4 : 2
        guard s.count == yearDigits + 11, s[s.count - 1] == UInt8(ascii: "Z") else { return nil }
        var f = [0, 0, 0, 0, 0, 0]  // small fixed array; certificate times are read only on cache misses
        var p = 0
        for (i, w) in [yearDigits, 2, 2, 2, 2, 2].enumerated() {
            var v = 0
            for _ in 0..<w {
                let d = Int(s[p]) &- 48
                guard d >= 0 && d <= 9 else { return nil }
                v = v * 10 + d
                p += 1
            }
            f[i] = v
        }
        var year = f[0]
        if !generalized { year += year < 50 ? 2000 : 1900 }
        guard f[1] >= 1, f[1] <= 12, f[2] >= 1, f[2] <= CivilTime.daysInMonth(year: year, month: f[1]), f[3] <= 23,
            f[4] <= 59, f[5] <= 60
        else { return nil }
        let days = CivilTime.days(year: year, month: f[1], day: f[2])
        return Int64(((days * 24 + f[3]) * 60 + f[4]) * 60 + f[5]) * 1000
    }
}
