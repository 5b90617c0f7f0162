import ReceiptModel

/// Text of UTC times for X.509 validity fields and receipt dates.
enum TimeText {
    /// Digits without separators (`yyMMddHHmmss` or `yyyyMMddHHmmss`, for X.509 times) or with them
    /// (`yyyy-MM-ddTHH:mm:ss`, for receipts).
    static func digits(_ ms: Int64, yearDigits: Int, separators: Bool) -> String {
        let f = CivilTime.fields(epochMillis: ms)
        let y = yearDigits == 2 ? pad(Int(f.year % 100), 2) : pad(Int(f.year), 4)
        if separators {
            return "\(y)-\(pad(f.month, 2))-\(pad(f.day, 2))T\(pad(f.hour, 2)):\(pad(f.minute, 2)):\(pad(f.second, 2))"
        }
        return "\(y)\(pad(f.month, 2))\(pad(f.day, 2))\(pad(f.hour, 2))\(pad(f.minute, 2))\(pad(f.second, 2))"
    }

    /// Epoch milliseconds of a UTC calendar time.
    static func epochMillis(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0
    )
        -> Int64
    {
        Int64(CivilTime.days(year: year, month: month, day: day)) * 86_400_000
            + Int64((hour * 60 + minute) * 60 + second) * 1000
    }

    private static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}

/// The textual forms a receipt date takes (receipt-format.md §4).
public enum ReceiptDateStyle: Sendable, Equatable, Hashable {
    /// `2020-09-27T12:07:19Z` (the instant's milliseconds are dropped).
    case zulu
    /// `2020-09-27T12:07:19.686Z`.
    case fractional
    /// `2020-10-16T14:29:30+0300`: local time at `minutes` east of UTC, no colon in the offset (Xcode 2020-21).
    case offset(minutes: Int)

    /// The text of `ms` in this style.
    public func format(_ ms: Int64) -> String {
        switch self {
        case .zulu:
            return TimeText.digits(ms, yearDigits: 4, separators: true) + "Z"
        case .fractional:
            let frac = String(CivilTime.fields(epochMillis: ms).millisecond + 1000).dropFirst()
            return TimeText.digits(ms, yearDigits: 4, separators: true) + "." + frac + "Z"
        case .offset(let minutes):
            let local = ms + Int64(minutes) * 60_000
            let a = abs(minutes)
            let hh = String(a / 60 + 100).dropFirst()
            let mm = String(a % 60 + 100).dropFirst()
            return TimeText.digits(local, yearDigits: 4, separators: true) + (minutes < 0 ? "-" : "+") + hh + mm
        }
    }

    /// The instant a reader recovers from `format(ms)`: `zulu` and `offset` keep whole seconds only.
    public func parsedValue(_ ms: Int64) -> Int64 {
        switch self {
        case .fractional: return ms
        case .zulu, .offset: return ms - ((ms % 1000) + 1000) % 1000
        }
    }
}
