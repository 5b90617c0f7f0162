import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptSynth
import Testing

@Suite struct DateParserTests {
    static func parse(_ s: String) -> ParsedDate {
        Array(s.utf8).withUnsafeBytes { DateParser.parse($0) }
    }

    /// Reference value from Foundation's ISO 8601 parser (independent of DateParser).
    static func reference(_ s: String) -> Int64 {
        let f = ISO8601DateFormatter()
        f.formatOptions = s.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return Int64((f.date(from: s)!.timeIntervalSince1970 * 1000).rounded())
    }

    @Test(arguments: [
        "2015-08-31T17:34:23Z", "2013-08-01T07:00:00Z", "2020-09-27T12:07:19.686Z", "1970-01-01T00:00:00Z",
        "2024-02-29T23:59:59Z", "2038-01-19T03:14:08Z", "2000-03-01T00:00:00.5Z",
    ])
    func parsesZuluForms(_ s: String) {
        #expect(Self.parse(s) == .millis(Self.reference(s)))
    }

    @Test func parsesNumericOffsets() {
        #expect(Self.parse("2020-10-16T14:29:30+0300") == .millis(Self.reference("2020-10-16T11:29:30Z")))
        #expect(Self.parse("2020-10-16T14:29:30-0800") == .millis(Self.reference("2020-10-16T22:29:30Z")))
        #expect(Self.parse("2020-10-16T14:29:30+03:00") == .millis(Self.reference("2020-10-16T11:29:30Z")))
    }

    @Test func parsesTheXcodeSentinel() {
        // 4001-01-01 is 2031 years past 1970. Leap years 1972...4000: 508 multiples of 4, less the 15 centuries
        // not divisible by 400 (2100, 2200, 2300, 2500, ..., 3900) = 493.
        #expect(Self.parse("4001-01-01T00:00:00Z") == .millis(Int64(365 * 2031 + 493) * 86_400_000))
    }

    @Test func emptyMeansAbsent() {
        #expect(Self.parse("") == .absent)
    }

    @Test(arguments: [
        "2015-13-01T00:00:00Z", "2015-02-29T00:00:00Z", "2015-01-01T24:00:00Z", "2015-01-01 00:00:00",
        "2015-01-01T00:00:00", "yyyy-mm-ddThh:mm:ssZ", "2015-01-01T00:00:00.Z", "2015-01-01T00:00:00Zjunk",
        "2015-01-01T00:00:00+3", "1", "2015-01-01T00:00:00.1234567890Z",
    ])
    func rejectsInvalid(_ s: String) {
        #expect(Self.parse(s) == .invalid)
    }
}

/// The date parser as it was before the word-at-a-time prefix (octet by octet, `daysFromCivil` for the days):
/// the reference the fast parser must agree with on every string.
enum ScalarDateParser {
    static func reference(_ s: UnsafeRawBufferPointer) -> ParsedDate {
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
        let days = Int(CivilTime.daysFromCivil(year: Int64(year), month: month, day: day))
        let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second - offsetMinutes * 60
        return .millis(Int64(seconds) * 1000 + Int64(millis))
    }
}

@Suite struct DateParserAgreementTests {
    static func both(_ bytes: [UInt8]) -> (ParsedDate, ParsedDate) {
        // An exactly sized heap copy: a read past the end would hit the allocator's guard in ASan runs.
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { buf.deallocate() }
        buf.copyBytes(from: bytes)
        let b = UnsafeRawBufferPointer(buf)
        return (DateParser.parse(b), ScalarDateParser.reference(b))
    }

    /// A date string in one of the forms receipts use for `rng`: any year 0000-9999 (often near a month end or a
    /// leap day), fields sometimes one past their range, every suffix form.
    static func sample(_ rng: inout SplitMix) -> [UInt8] {
        func two(_ v: UInt64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year =
            rng.next() % 4 == 0 ? [0, 1, 400, 1900, 2000, 2024, 2100, 9999][Int(rng.next() % 8)] : rng.next() % 10_000
        var y = "\(year)"
        while y.count < 4 { y = "0" + y }
        let month = rng.next() % 14
        let day = rng.next() % 2 == 0 ? 28 + rng.next() % 5 : rng.next() % 32
        let sep = rng.next() % 8 == 0 ? " " : "T"
        var s =
            "\(y)-\(two(month))-\(two(day))\(sep)\(two(rng.next() % 25)):\(two(rng.next() % 61)):\(two(rng.next() % 62))"
        switch rng.next() % 5 {
        case 0: s += "Z"
        case 1: s += "." + String(repeating: "7", count: Int(1 + rng.next() % 9)) + "Z"
        case 2: s += (rng.next() % 2 == 0 ? "+" : "-") + two(rng.next() % 25) + two(rng.next() % 61)
        case 3: s += (rng.next() % 2 == 0 ? "+" : "-") + two(rng.next() % 25) + ":" + two(rng.next() % 61)
        default: s += ".5+0130"
        }
        return Array(s.utf8)
    }

    static let interesting: [UInt8] = Array("09/:;-T Z.+a".utf8) + [0x00, 0x80, 0xB0, 0xFF]

    @Test func agreesWithTheScalarParser() {
        var rng = SplitMix(seed: 0xDA7E)
        var valid = 0
        var invalid = 0
        for i in 0..<200_000 {
            var b = Self.sample(&rng)
            if i % 2 == 1 {
                for _ in 0..<(1 + Int(rng.next() % 2)) {
                    let k = Int(rng.next() % UInt64(b.count))
                    b[k] =
                        rng.next() % 2 == 0
                        ? Self.interesting[Int(rng.next() % UInt64(Self.interesting.count))]
                        : UInt8(truncatingIfNeeded: rng.next())
                }
            }
            let (fast, reference) = Self.both(b)
            #expect(fast == reference, "\(String(decoding: b, as: UTF8.self))")
            if case .millis = reference { valid += 1 } else { invalid += 1 }
        }
        #expect(valid > 50_000 && invalid > 50_000, "\(valid) valid, \(invalid) invalid")
    }

    @Test func everyOctetOfThePrefixIsChecked() {
        let good = Array("2024-02-29T23:59:60Z".utf8)
        #expect(Self.both(good).0 == Self.both(good).1)
        for k in 0..<19 {
            for v in 0...255 {
                var b = good
                b[k] = UInt8(v)
                let (fast, reference) = Self.both(b)
                #expect(fast == reference, "octet \(k) = \(v)")
            }
        }
    }
}
