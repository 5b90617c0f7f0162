import ReceiptModel

/// Parses `--as-of`: an RFC 3339 date-time (`2024-05-01T00:00:00Z`, fractional seconds and a `±HH:MM` offset
/// allowed) or a full date (`2024-05-01`, midnight UTC). Returns epoch milliseconds, nil when malformed.
public enum AsOfDate {
    public static func parse(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<(at + n) {
                guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard let y = digits(0, 4), b.count >= 10, b[4] == 0x2D, let mo = digits(5, 2), b[7] == 0x2D,
            let d = digits(8, 2), (1...12).contains(mo), d >= 1,
            d <= CivilTime.daysInMonth(year: y, month: mo)
        else { return nil }
        let day = CivilTime.daysFromCivil(year: Int64(y), month: mo, day: d)
        if b.count == 10 { return day * 86_400_000 }
        guard b.count >= 20, b[10] == 0x54 || b[10] == 0x74 || b[10] == 0x20, let h = digits(11, 2), b[13] == 0x3A,
            let mi = digits(14, 2), b[16] == 0x3A, let s = digits(17, 2), h < 24, mi < 60, s < 61
        else { return nil }
        var i = 19
        var millis = 0
        if b[i] == 0x2E {
            i += 1
            var scale = 100
            let start = i
            while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                millis += Int(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 0x5A || b[i] == 0x7A {
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A, let om = digits(i + 4, 2), oh < 24,
                om < 60
            else { return nil }
            offset = (oh * 60 + om) * (b[i] == 0x2D ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = day * 86_400 + Int64(h * 3600 + mi * 60 + s) - Int64(offset * 60)
        return seconds * 1000 + Int64(millis)
    }
}
