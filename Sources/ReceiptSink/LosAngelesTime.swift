import ReceiptModel

/// Pacific time (`America/Los_Angeles`) by rule, for verifyReceipt's `x_pst` dates.
///
/// The rules are those of the tz database for this zone, encoded by hand so that the hot path needs no time zone
/// database and no Foundation: US rules from 2007 (second Sunday in March to first Sunday in November),
/// 1987-2006 (first Sunday in April to last Sunday in October), 1967-1986 (last Sunday in April, with the 1974 and
/// 1975 energy-crisis starts), California's rules 1948-1966, war time 1942-1945, US 1918-1919, and local mean time
/// before 1883-11-18. Transitions happen at 02:00 local time (01:00 for California 1950-1966).
public enum LosAngelesTime {
    static let standard: Int64 = -8 * 3600
    static let daylight: Int64 = -7 * 3600
    /// Local mean time, -7:52:58, until railroad time began.
    static let lmt: Int64 = -(7 * 3600 + 52 * 60 + 58)
    /// 1883-11-18 20:00 UTC.
    static let lmtEnd: Int64 = CivilTime.daysFromCivil(year: 1883, month: 11, day: 18) * 86_400 + 20 * 3600

    /// The UTC offset in seconds (negative) in effect at `epochSeconds`.
    public static func utcOffsetSeconds(epochSeconds s: Int64) -> Int64 {
        if s < lmtEnd { return lmt }
        // Year of the instant in standard time: every transition of a year-based rule is far from January 1.
        let year = CivilTime.civilFromDays(CivilTime.floorDiv(s + standard, 86_400)).year
        if let (start, end) = daylightInterval(year: year), s >= start, s < end { return daylight }
        return standard
    }

    /// The UTC offset in seconds at `epochMillis`.
    @inlinable public static func utcOffsetSeconds(epochMillis: Int64) -> Int64 {
        utcOffsetSeconds(epochSeconds: CivilTime.floorDiv(epochMillis, 1000))
    }

    /// Daylight time in `year` as UTC seconds `[start, end)`, or nil when the year had none.
    /// Intervals that cross a year end (war time, 1948-49) are returned whole for each year they touch.
    static func daylightInterval(year: Int64) -> (Int64, Int64)? {
        switch year {
        case 1918...1919:
            return (at(year, 3, lastSunday(year, 3), 2, standard), at(year, 10, lastSunday(year, 10), 2, daylight))
        case 1942...1945:
            // War time from 1942-02-09 02:00 PST to 1945-09-30 02:00 PWT ("peace time" from Aug 14 is the same offset).
            return (at(1942, 2, 9, 2, standard), at(1945, 9, 30, 2, daylight))
        case 1948...1949:
            return (at(1948, 3, 14, 2, standard) + 60, at(1949, 1, 1, 2, daylight))  // from 02:01 PST
        case 1950...1961:
            return (at(year, 4, lastSunday(year, 4), 1, standard), at(year, 9, lastSunday(year, 9), 2, daylight))
        case 1962...1966:
            return (at(year, 4, lastSunday(year, 4), 1, standard), at(year, 10, lastSunday(year, 10), 2, daylight))
        case 1967...1973, 1976...1986:
            return (at(year, 4, lastSunday(year, 4), 2, standard), at(year, 10, lastSunday(year, 10), 2, daylight))
        case 1974:
            return (at(1974, 1, 6, 2, standard), at(1974, 10, lastSunday(1974, 10), 2, daylight))
        case 1975:
            return (at(1975, 2, lastSunday(1975, 2), 2, standard), at(1975, 10, lastSunday(1975, 10), 2, daylight))
        case 1987...2006:
            return (
                at(year, 4, sunday(year, 4, onOrAfter: 1), 2, standard), at(year, 10, lastSunday(year, 10), 2, daylight)
            )
        case 2007...:
            return (
                at(year, 3, sunday(year, 3, onOrAfter: 8), 2, standard),
                at(year, 11, sunday(year, 11, onOrAfter: 1), 2, daylight)
            )
        default:
            return nil
        }
    }

    /// UTC seconds of local `hour:00` on the given date, in a zone `offset` seconds from UTC.
    static func at(_ year: Int64, _ month: Int, _ day: Int, _ hour: Int64, _ offset: Int64) -> Int64 {
        CivilTime.daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 - offset
    }

    /// Day of the month of the first Sunday on or after `day`.
    static func sunday(_ year: Int64, _ month: Int, onOrAfter day: Int) -> Int {
        let wd = CivilTime.weekday(days: CivilTime.daysFromCivil(year: year, month: month, day: day))
        return day + (7 - wd) % 7
    }

    /// Day of the month of the last Sunday of `month`.
    static func lastSunday(_ year: Int64, _ month: Int) -> Int {
        let next = month == 12 ? (year + 1, 1) : (year, month + 1)
        let lastDay = CivilTime.daysFromCivil(year: next.0, month: next.1, day: 1) - 1
        let (_, _, d) = CivilTime.civilFromDays(lastDay)
        return d - CivilTime.weekday(days: lastDay)
    }

    /// Appends `2020-11-29 20:02:18 America/Los_Angeles` (verifyReceipt's `x_pst` form, milliseconds dropped).
    public static func appendPST(epochMillis: Int64, into out: inout [UInt8]) {
        let f = CivilTime.fields(epochMillis: epochMillis, offsetSeconds: utcOffsetSeconds(epochMillis: epochMillis))
        CivilTime.appendDate(f, into: &out)
        out.append(UInt8(ascii: " "))
        CivilTime.appendTime(f, into: &out)
        out.append(contentsOf: " America/Los_Angeles".utf8)
    }
}
