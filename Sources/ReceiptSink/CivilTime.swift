/// UTC calendar arithmetic on epoch values (proleptic Gregorian), without Foundation: the writers format
/// millions of timestamps and must not allocate or consult time zone databases to do it.
public enum CivilTime {
    /// A broken-down instant.
    public struct Fields: Sendable, Equatable {
        public var year: Int64
        public var month: Int
        public var day: Int
        public var hour: Int
        public var minute: Int
        public var second: Int
        public var millisecond: Int
    }

    /// `a / b` rounded toward negative infinity (`b > 0`).
    @inlinable public static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b < 0) ? q - 1 : q
    }

    /// `a mod b` in `0..<b` (`b > 0`).
    @inlinable public static func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
        let r = a % b
        return r < 0 ? r + b : r
    }

    /// Days since 1970-01-01 of the civil date `year-month-day` (month 1...12).
    ///
    /// The era/day-of-era method: exact for every year an `Int64` of days can hold.
    public static func daysFromCivil(year: Int64, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yoe = y - era * 400  // 0...399
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1  // 0...365
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy  // 0...146096
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of `days` since 1970-01-01 (inverse of `daysFromCivil`).
    public static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097  // 0...146096
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365  // 0...399
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)  // 0...365
        let mp = (5 * doy + 2) / 153  // 0...11, March-based
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), Int(m), Int(d))
    }

    /// Day of the week of `days` since 1970-01-01: 0 = Sunday ... 6 = Saturday (1970-01-01 was a Thursday).
    @inlinable public static func weekday(days: Int64) -> Int {
        Int(floorMod(days + 4, 7))
    }

    /// Broken-down fields of `epochMillis` shifted by `offsetSeconds` (0 for UTC).
    public static func fields(epochMillis: Int64, offsetSeconds: Int64 = 0) -> Fields {
        // Seconds first, so that adding the offset cannot overflow even at Int64.min milliseconds.
        let secs = floorDiv(epochMillis, 1000) + offsetSeconds
        let ms = Int(floorMod(epochMillis, 1000))
        let days = floorDiv(secs, 86_400)
        let sod = Int(floorMod(secs, 86_400))
        let (y, m, d) = civilFromDays(days)
        return Fields(
            year: y, month: m, day: d, hour: sod / 3600, minute: sod / 60 % 60, second: sod % 60, millisecond: ms)
    }

    // MARK: - Formatting into byte buffers

    /// Appends `YYYY-MM-DD` (years outside 0...9999 get a sign or more digits).
    @inlinable static func appendDate(_ f: Fields, into out: inout [UInt8]) {
        if f.year < 0 {
            out.append(UInt8(ascii: "-"))
            appendPadded(UInt64(f.year.magnitude), width: 4, into: &out)
        } else {
            appendPadded(UInt64(f.year), width: 4, into: &out)
        }
        out.append(UInt8(ascii: "-"))
        appendPadded(UInt64(f.month), width: 2, into: &out)
        out.append(UInt8(ascii: "-"))
        appendPadded(UInt64(f.day), width: 2, into: &out)
    }

    /// Appends `HH:MM:SS`.
    @inlinable static func appendTime(_ f: Fields, into out: inout [UInt8]) {
        appendPadded(UInt64(f.hour), width: 2, into: &out)
        out.append(UInt8(ascii: ":"))
        appendPadded(UInt64(f.minute), width: 2, into: &out)
        out.append(UInt8(ascii: ":"))
        appendPadded(UInt64(f.second), width: 2, into: &out)
    }

    /// Appends `2019-08-08T05:43:20.000Z` (the CSV timestamp form).
    public static func appendISO8601(epochMillis: Int64, into out: inout [UInt8]) {
        let f = fields(epochMillis: epochMillis)
        appendDate(f, into: &out)
        out.append(UInt8(ascii: "T"))
        appendTime(f, into: &out)
        out.append(UInt8(ascii: "."))
        appendPadded(UInt64(f.millisecond), width: 3, into: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// Appends `2020-11-30 04:02:18 Etc/GMT` (verifyReceipt's `x` form; milliseconds are dropped, as Apple did).
    public static func appendGMT(epochMillis: Int64, into out: inout [UInt8]) {
        let f = fields(epochMillis: epochMillis)
        appendDate(f, into: &out)
        out.append(UInt8(ascii: " "))
        appendTime(f, into: &out)
        out.append(contentsOf: " Etc/GMT".utf8)
    }

    /// Appends `v` in decimal, left-padded with zeros to at least `width` digits.
    @inlinable static func appendPadded(_ v: UInt64, width: Int, into out: inout [UInt8]) {
        var digits = 1
        var t = v
        while t >= 10 {
            t /= 10
            digits += 1
        }
        if digits < width {
            for _ in digits..<width { out.append(UInt8(ascii: "0")) }
        }
        DecimalText.append(v, into: &out)
    }
}

/// Decimal integer formatting into byte buffers, without `String`.
public enum DecimalText {
    /// Appends `v` in decimal.
    @inlinable public static func append(_ v: UInt64, into out: inout [UInt8]) {
        if v < 10 {
            out.append(UInt8(truncatingIfNeeded: v) &+ 48)  // 48...57, a single digit
            return
        }
        // UInt64.max has 20 digits: fill a 24-byte stack buffer from the right, then copy the digits once.
        var buf: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var n = 0
        var x = v
        withUnsafeMutableBytes(of: &buf) { p in
            while x > 0 {
                p[23 - n] = UInt8(truncatingIfNeeded: x % 10) &+ 48  // n < 20 <= 24: in range
                x /= 10
                n += 1
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: p[(24 - n)...]))
        }
    }

    /// Appends `v` in decimal with a leading `-` when negative (exact for Int64.min).
    @inlinable public static func append(_ v: Int64, into out: inout [UInt8]) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        append(UInt64(v.magnitude), into: &out)
    }
}
