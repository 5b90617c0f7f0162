import ReceiptModel
import Testing

@testable import ReceiptSink

@Suite struct CivilTimeTests {
    func iso(_ ms: Int64) -> String {
        var out: [UInt8] = []
        CivilTime.appendISO8601(epochMillis: ms, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func formatsTheContractTimestampForm() {
        #expect(iso(1_565_243_000_000) == "2019-08-08T05:43:20.000Z")
        #expect(iso(951_825_600_123) == "2000-02-29T12:00:00.123Z")
        #expect(iso(0) == "1970-01-01T00:00:00.000Z")
        #expect(iso(-1) == "1969-12-31T23:59:59.999Z")
        #expect(iso(64_092_211_200_000) == "4001-01-01T00:00:00.000Z")  // Xcode's expiration sentinel
    }

    @Test func daysFromCivilInvertsCivilFromDays() {
        for days: Int64 in [-1_000_000, -719_468, -1, 0, 1, 11_016, 18_000, 2_932_896, 100_000_000] {
            let (y, m, d) = CivilTime.civilFromDays(days)
            #expect(CivilTime.daysFromCivil(year: y, month: m, day: d) == days)
        }
        #expect(CivilTime.daysFromCivil(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilTime.weekday(days: 0) == 4)  // 1970-01-01 was a Thursday
    }

    @Test func daysAgreesWithDaysFromCivil() {
        // Every year the parser reads and some on either side (the general path), every month, and days at and
        // past the ends of months.
        for year in -401...10_400 {
            for month in 1...12 {
                for day in [-1, 0, 1, 2, 15, 28, 29, 30, 31, 32] {
                    let expected = Int(CivilTime.daysFromCivil(year: Int64(year), month: month, day: day))
                    if CivilTime.days(year: year, month: month, day: day) != expected {
                        Issue.record("\(year)-\(month)-\(day)")
                        return
                    }
                }
            }
        }
    }

    @Test func gmtFormDropsMilliseconds() {
        var out: [UInt8] = []
        CivilTime.appendGMT(epochMillis: 1_606_708_938_999, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "2020-11-30 04:02:18 Etc/GMT")
    }

    @Test func decimalTextIsExactAtTheExtremes() {
        var out: [UInt8] = []
        DecimalText.append(Int64.min, into: &out)
        out.append(0x20)
        DecimalText.append(Int64.max, into: &out)
        out.append(0x20)
        DecimalText.append(UInt64(0), into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "-9223372036854775808 9223372036854775807 0")
    }
}
