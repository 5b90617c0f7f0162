import ReceiptSynth
import Testing

@Suite struct DERTests {
    static let integers: [(Int64, [UInt8])] = [
        (0, [0x02, 0x01, 0x00]),
        (127, [0x02, 0x01, 0x7F]),
        (128, [0x02, 0x02, 0x00, 0x80]),
        (256, [0x02, 0x02, 0x01, 0x00]),
        (-1, [0x02, 0x01, 0xFF]),
        (-128, [0x02, 0x01, 0x80]),
        (-129, [0x02, 0x02, 0xFF, 0x7F]),
        (Int64.max, [0x02, 0x08, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
    ]

    @Test(arguments: integers)
    func integersUseMinimalTwosComplement(value: Int64, expected: [UInt8]) {
        #expect(DER.integer(value) == expected)
    }

    @Test func lengthsUseShortFormBelow128AndMinimalLongForm() {
        #expect(DER.length(0) == [0x00])
        #expect(DER.length(127) == [0x7F])
        #expect(DER.length(128) == [0x81, 0x80])
        #expect(DER.length(255) == [0x81, 0xFF])
        #expect(DER.length(256) == [0x82, 0x01, 0x00])
        #expect(DER.length(70_000) == [0x83, 0x01, 0x11, 0x70])
    }

    @Test func objectIdentifiersEncodeBase128Arcs() {
        // 1.2.840.113549.1.7.2 (signedData), as every PKCS #7 file spells it.
        #expect(DER.oid("1.2.840.113549.1.7.2") == [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02])
        // 1.2.840.113635.100.6.11.1, Apple's receipt-signing marker.
        #expect(
            DER.oidContents("1.2.840.113635.100.6.11.1") == [
                0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06, 0x0B, 0x01,
            ])
    }

    @Test func unsignedIntegersGainALeadingZeroWhenTheTopBitIsSet() {
        #expect(DER.unsignedInteger([0x00, 0x00, 0x80]) == [0x02, 0x02, 0x00, 0x80])
        #expect(DER.unsignedInteger([0x7F]) == [0x02, 0x01, 0x7F])
        #expect(DER.unsignedInteger([]) == [0x02, 0x01, 0x00])
    }

    @Test func setsKeepInsertionOrderUnlessAskedToSort() {
        let a = DER.integer(2)
        let b = DER.integer(1)
        #expect(DER.set([a, b]) == [0x31, 0x06] + a + b)
        #expect(DER.set([a, b], sorted: true) == [0x31, 0x06] + b + a)
    }

    @Test func certificateTimesSwitchToGeneralizedTimeFrom2050() {
        // 2020-01-02T03:04:05Z
        #expect(DER.time(epochSeconds: 1_577_934_245) == [0x17, 0x0D] + Array("200102030405Z".utf8))
        // 2050-01-01T00:00:00Z
        #expect(DER.time(epochSeconds: 2_524_608_000) == [0x18, 0x0F] + Array("20500101000000Z".utf8))
    }
}
