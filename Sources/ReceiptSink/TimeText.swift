import ReceiptModel

/// Timestamp text for the writers: `2019-08-08T05:43:20.000Z` (CSV, inspect) and `2019-08-08 05:43:20 Etc/GMT`
/// (verifyReceipt), appended to byte buffers without allocating.
extension CivilTime {
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

    /// Appends `YYYY-MM-DD` of `days` since 1970-01-01 (the CSV and NDJSON form of a date column).
    public static func appendDate(days: Int64, into out: inout [UInt8]) {
        appendDate(fields(epochMillis: days * 86_400_000), into: &out)
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
