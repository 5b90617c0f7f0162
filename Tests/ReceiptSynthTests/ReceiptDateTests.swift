import ReceiptSynth
import Testing

@Suite struct ReceiptDateTests {
    // 2020-09-27T12:07:19.686Z
    static let instant: Int64 = 1_601_208_439_686

    @Test func zuluDropsMilliseconds() {
        #expect(ReceiptDateStyle.zulu.format(Self.instant) == "2020-09-27T12:07:19Z")
        #expect(ReceiptDateStyle.zulu.parsedValue(Self.instant) == 1_601_208_439_000)
    }

    @Test func fractionalKeepsMilliseconds() {
        #expect(ReceiptDateStyle.fractional.format(Self.instant) == "2020-09-27T12:07:19.686Z")
        #expect(ReceiptDateStyle.fractional.format(1_601_208_439_005) == "2020-09-27T12:07:19.005Z")
        #expect(ReceiptDateStyle.fractional.parsedValue(Self.instant) == Self.instant)
    }

    @Test func offsetsWriteLocalTimeWithoutAColon() {
        #expect(ReceiptDateStyle.offset(minutes: 180).format(Self.instant) == "2020-09-27T15:07:19+0300")
        #expect(ReceiptDateStyle.offset(minutes: -480).format(Self.instant) == "2020-09-27T04:07:19-0800")
        #expect(ReceiptDateStyle.offset(minutes: 330).format(Self.instant) == "2020-09-27T17:37:19+0530")
        #expect(ReceiptDateStyle.offset(minutes: 180).parsedValue(Self.instant) == 1_601_208_439_000)
    }

    @Test func datesBeforeTheEpochAndFarFutureFormat() {
        #expect(ReceiptDateStyle.zulu.format(-1) == "1969-12-31T23:59:59Z")
        #expect(ReceiptDateStyle.zulu.parsedValue(-1) == -1000)
        #expect(ReceiptDateStyle.zulu.format(PayloadBuilder.xcodeExpirationSentinel) == "4001-01-01T00:00:00Z")
    }
}
