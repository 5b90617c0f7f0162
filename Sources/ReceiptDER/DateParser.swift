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
        guard s[4] == UInt8(ascii: "-"), s[7] == UInt8(ascii: "-"), s[10] == UInt8(ascii: "T") || s[10] == 0x20,
            s[13] == UInt8(ascii: ":"), s[16] == UInt8(ascii: ":")
        else { return .invalid }
        let year = digits(0, 4)
        let month = digits(5, 2)
        let day = digits(8, 2)
        let hour = digits(11, 2)
        let minute = digits(14, 2)
        let second = digits(17, 2)
        guard year >= 0, month >= 1, month <= 12, day >= 1, hour >= 0, hour <= 23, minute >= 0, minute <= 59,
            second >= 0, second <= 60
        else { return .invalid }
        guard day <= CivilTime.daysInMonth(year: year, month: month) else { return .invalid }
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
        let days = CivilTime.days(year: year, month: month, day: day)
        let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second - offsetMinutes * 60
        return .millis(Int64(seconds) * 1000 + Int64(millis))
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
