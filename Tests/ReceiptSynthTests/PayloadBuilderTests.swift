import ReceiptDER
import ReceiptModel
import ReceiptSynth
import Testing

@Suite struct PayloadBuilderTests {
    @Test func attributesAreWrittenInInsertionOrderNotSorted() {
        var b = PayloadBuilder()
        b.utf8(19, "1.0")
        b.integer(1, 5)
        let p = b.encode()
        // SET { SEQ { 19, 1, OCTET STRING { UTF8String "1.0" } }, SEQ { 1, 1, OCTET STRING { INTEGER 5 } } }
        #expect(
            p == [
                0x31, 0x1C,
                0x30, 0x0D, 0x02, 0x01, 0x13, 0x02, 0x01, 0x01, 0x04, 0x05, 0x0C, 0x03, 0x31, 0x2E, 0x30,
                0x30, 0x0B, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x04, 0x03, 0x02, 0x01, 0x05,
            ])
    }

    @Test func absentDatesAreEmptyIA5Strings() {
        var b = PayloadBuilder()
        b.date(1708, nil)
        #expect(
            b.encode() == [0x31, 0x0D, 0x30, 0x0B, 0x02, 0x02, 0x06, 0xAC, 0x02, 0x01, 0x01, 0x04, 0x02, 0x16, 0x00])
    }

    /// ReceiptDER's parser (written independently) reads every form the builder writes.
    @Test func receiptParserReadsEveryAttributeForm() throws {
        var entry = PayloadBuilder()
        entry.date(1712, nil)
        entry.integer(1701, 3)
        entry.utf8(1702, "com.example.gems")
        entry.date(1704, 1_601_208_439_686, style: .fractional)
        entry.date(1708, 1_601_208_439_000, style: .offset(minutes: 180))
        entry.integer(1719, 1)
        entry.raw(1722, [0xDE, 0xAD])
        var b = PayloadBuilder()
        b.date(21, PayloadBuilder.xcodeExpirationSentinel)
        b.utf8(0, "Xcode")
        b.inApp(entry)
        b.raw(25, [1, 2, 3], version: 2)
        b.date(12, 1_601_208_439_000, style: .zulu)
        b.integer(15, Int64(1) << 60)
        let pki = SharedPKI.pki
        let der = ReceiptSigner.sign(payload: b.encode(), identity: pki.identity(.valid), options: .init(form: .ber))
        let (_, r) = try decodeReceipt(der)
        #expect(r.receiptType == "Xcode")
        #expect(r.expirationDate == 64_092_211_200_000)
        #expect(r.receiptCreationDate == 1_601_208_439_000)
        #expect(r.downloadID == 1 << 60)
        #expect(r.attributes.map(\.type) == [21, 0, 17, 25, 12, 15])
        #expect(r.attributes[3].version == 2)
        let p = try #require(r.inApp.first)
        #expect(p.quantity == 3)
        #expect(p.productID == "com.example.gems")
        #expect(p.purchaseDate == 1_601_208_439_686)
        #expect(p.expiresDate == 1_601_208_439_000)
        #expect(p.cancellationDate == nil)
        #expect(p.isInIntroOfferPeriod == 1)
        #expect(p.attributes.map(\.type) == [1712, 1701, 1702, 1704, 1708, 1719, 1722])
    }
}
