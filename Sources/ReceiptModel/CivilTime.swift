/// Proleptic Gregorian calendar arithmetic on epoch days, without Foundation (used on hot paths).
public enum CivilTime {
    /// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil). Valid far beyond year 9999.
    @inlinable public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The civil date of a count of days since 1970-01-01 (inverse of `days`).
    @inlinable public static func civil(days z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// 0 = Sunday ... 6 = Saturday.
    @inlinable public static func weekday(days: Int) -> Int {
        let w = (days + 4) % 7  // 1970-01-01 was a Thursday
        return w < 0 ? w + 7 : w
    }

    @inlinable public static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    @inlinable public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Splits epoch milliseconds into civil fields (UTC).
    @inlinable public static func fields(millis: Int64)
        -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int)
    {
        var days = Int(millis / 86_400_000)
        var rem = Int(millis % 86_400_000)
        if rem < 0 {
            rem += 86_400_000
            days -= 1
        }
        let (y, m, d) = civil(days: days)
        return (y, m, d, rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000)
    }
}
