import ReceiptDER
import ReceiptModel
import ReceiptSynth
import ReceiptTestSupport
import Testing

@testable import ReceiptVerify

/// `ReceiptVerifier.verify(_:parsedBy:)`: parse with ReceiptParser, then verify at the parsed creation date.
struct ReceiptVerifierParserTests {
    func verify(_ der: [UInt8], _ verifier: ReceiptVerifier, parser: ReceiptParser) throws -> VerifyOutcome {
        try der.withUnsafeBytes { raw in
            try parser.parse(raw)
            return verifier.verify(raw, parsedBy: parser)
        }
    }

    @Test
    func realReceiptsVerifyThroughOneParserAndOneVerifier() throws {
        let verifier = try TestAnchors.verifier([TestAnchors.applePath, TestAnchors.storeKitPath])
        let parser = ReceiptParser()
        let names = Fixtures.realReceiptNames()
        #expect(names.count == 18)
        for name in names {
            let der = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(name))
            let outcome = try verify(der, verifier, parser: parser)
            #expect(outcome.verified, "\(name): \(outcome.detail ?? "")")
        }
    }

    @Test func berReceiptWithContentInTheParsersScratchVerifies() throws {
        let der = ReceiptSigner.sign(
            payload: TestCA.payload(created: TestCA.created2020), identity: TestCA.pki.identity(.valid),
            options: .init(digest: .sha256, form: .ber))
        let parser = ReceiptParser()
        let outcome = try verify(der, try TestCA.verifier(), parser: parser)
        #expect(parser.container.contentInScratch)
        #expect(outcome.verified, "\(outcome.detail ?? "")")
    }

    @Test func receiptWithoutCreationDateIsMalformed() throws {
        var payload = PayloadBuilder()
        payload.utf8(0, "ProductionSandbox")
        payload.utf8(2, "com.example.receiptflow")
        let der = ReceiptSigner.sign(payload: payload.encode(), identity: TestCA.pki.identity(.valid))
        let outcome = try verify(der, try TestCA.verifier(), parser: ReceiptParser())
        #expect(outcome.error == .malformedAttribute)
        #expect(outcome.status == .malformed)
        #expect(outcome.detail?.contains("attribute 12") == true)
    }

    @Test func tamperedReceiptIsRejectedThroughTheParserPath() throws {
        let der = ReceiptSigner.sign(
            payload: TestCA.payload(created: TestCA.created2020), identity: TestCA.pki.identity(.valid),
            options: {
                var o = ReceiptSigner.Options()
                o.flipSignatureBit = true
                return o
            }())
        let outcome = try verify(der, try TestCA.verifier(), parser: ReceiptParser())
        #expect(outcome.error == .badSignature)
    }
}
