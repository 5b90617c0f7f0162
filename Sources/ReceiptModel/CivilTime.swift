/// UTC calendar arithmetic on epoch values (proleptic Gregorian), without Foundation: the parser and the writers
/// handle millions of timestamps and must not allocate or consult time zone databases to do it.
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

    /// Days since 1970-01-01 of a civil date, for the parser's small year range (0...9999).
    @inlinable @inline(__always) public static func days(year: Int, month: Int, day: Int) -> Int {
        guard year >= 0 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= 31 else {
            return Int(daysFromCivil(year: Int64(year), month: month, day: day))
        }
        // `daysFromCivil` with the year moved up one 400-year era (146,097 days), so that every quotient is of a
        // non-negative number and needs no rounding fix: the parser converts every date it reads.
        // Wrapping operators: every value below is bounded by the guard (noted on the right), far from overflow.
        let y = UInt(truncatingIfNeeded: year &+ 400 &- (month <= 2 ? 1 : 0))  // 399...10399
        let era = y / 400  // 0...25
        let yoe = y &- era &* 400  // 0...399
        let m = UInt(truncatingIfNeeded: month > 2 ? month &- 3 : month &+ 9)  // March-based, 0...11
        let doy = (153 &* m &+ 2) / 5 &+ UInt(truncatingIfNeeded: day) &- 1  // 0...395
        let doe = yoe &* 365 &+ yoe / 4 &- yoe / 100 &+ doy  // 0...146,126
        return (Int(truncatingIfNeeded: era) &- 1) &* 146_097 &+ Int(truncatingIfNeeded: doe) &- 719_468
    }

    @inlinable public static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    @inlinable public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
