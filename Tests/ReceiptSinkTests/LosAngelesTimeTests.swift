import Testing

@testable import ReceiptSink

@Suite struct LosAngelesTimeTests {
    func pst(_ ms: Int64) -> String {
        var out: [UInt8] = []
        LosAngelesTime.appendPST(epochMillis: ms, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func rendersTheFixtureDatesAsAppleDid() {
        // From whitepaek_consumable.response.json.
        #expect(pst(1_606_708_938_000) == "2020-11-29 20:02:18 America/Los_Angeles")
        #expect(pst(1_375_340_400_000) == "2013-08-01 00:00:00 America/Los_Angeles")
    }

    @Test func springsForwardOnTheSecondSundayOfMarchSince2007() {
        #expect(pst(1_615_715_999_000) == "2021-03-14 01:59:59 America/Los_Angeles")
        #expect(pst(1_615_716_000_000) == "2021-03-14 03:00:00 America/Los_Angeles")
    }

    @Test func fallsBackOnTheFirstSundayOfNovemberSince2007() {
        #expect(pst(1_636_275_599_999) == "2021-11-07 01:59:59 America/Los_Angeles")
        #expect(pst(1_636_275_600_000) == "2021-11-07 01:00:00 America/Los_Angeles")
    }

    @Test func usesTheAprilToOctoberRulesBefore2007() {
        #expect(pst(1_143_972_000_000 - 1000) == "2006-04-02 01:59:59 America/Los_Angeles")
        #expect(pst(1_143_972_000_000) == "2006-04-02 03:00:00 America/Los_Angeles")
        #expect(pst(1_162_112_399_000) == "2006-10-29 01:59:59 America/Los_Angeles")
        #expect(pst(1_162_112_400_000) == "2006-10-29 01:00:00 America/Los_Angeles")
        // 1975: daylight time from the last Sunday of February (energy crisis).
        #expect(pst(162_381_600_000) == "1975-02-23 03:00:00 America/Los_Angeles")
    }

    @Test func negativeInstantsRoundDownToTheSecond() {
        #expect(pst(-1) == "1969-12-31 15:59:59 America/Los_Angeles")
    }

    @Test func offsetsAreEightOrSevenHoursWest() {
        #expect(LosAngelesTime.utcOffsetSeconds(epochSeconds: 1_615_715_999) == -8 * 3600)
        #expect(LosAngelesTime.utcOffsetSeconds(epochSeconds: 1_615_716_000) == -7 * 3600)
    }

    @Test func extremeInstantsDoNotTrap() {
        #expect(!pst(Int64.min).isEmpty)
        #expect(!pst(Int64.max).isEmpty)
    }
}
