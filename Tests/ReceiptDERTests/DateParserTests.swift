import Foundation
import ReceiptDER
import ReceiptModel
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
