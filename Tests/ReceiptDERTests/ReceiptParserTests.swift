import Foundation
import ReceiptModel
import ReceiptSynth
import Testing

@testable import ReceiptDER

/// Each `parse` starts from fresh values: nothing of one receipt shows in the next, whichever fields it lacks.
@Suite struct ReceiptParserTests {
    static let pki = try! TestPKI.load(
        directory: FileManager.default.temporaryDirectory.appendingPathComponent("rf-pipeline-tests-ca"))

    /// A receipt with every app-level attribute the parser decodes and two fully filled in-app entries, signed with
    /// several certificates and (`constructed`) its content split across a constructed OCTET STRING.
    static func full() -> [UInt8] {
        var b = PayloadBuilder()
        b.utf8(0, "ProductionSandbox")
        b.integer(1, 42)
        b.utf8(2, "com.example.full")
        b.utf8(3, "7.1")
        b.raw(4, [1, 2, 3, 4])
        b.raw(5, [UInt8](repeating: 9, count: 20))
        b.date(12, 1_709_251_200_000)
        b.integer(15, 77)
        b.integer(16, 88)
        b.date(18, 1_609_459_200_000)
        b.utf8(19, "1.0")
        b.date(21, 1_893_456_000_000)
        for k in 0..<2 {
            var e = PayloadBuilder()
            e.integer(1701, 1)
            e.utf8(1702, "com.example.full.p\(k)")
            e.utf8(1703, "100\(k)")
            e.date(1704, 1_700_000_000_000)
            e.utf8(1705, "100\(k)")
            e.date(1706, 1_700_000_000_000)
            e.date(1708, 1_800_000_000_000)
            e.integer(1707, 2)
            e.integer(1711, 5)
            e.date(1712, 1_750_000_000_000)
            e.integer(1713, 1)
            e.integer(1719, 1)
            e.integer(1720, 0)
            e.utf8(1721, "offer")
            b.inApp(e)
        }
        var options = ReceiptSigner.Options()
        options.form = .berIndefinite(chunkSize: 64)
        return ReceiptSigner.sign(payload: b.encode(), identity: pki.identity(.valid), options: options)
    }

    /// A receipt with a bundle id only and one bare in-app entry.
    static func sparse() -> [UInt8] {
        var b = PayloadBuilder()
        b.utf8(2, "com.example.sparse")
        var e = PayloadBuilder()
        e.utf8(1703, "5")
        b.inApp(e)
        return ReceiptSigner.sign(payload: b.encode(), identity: pki.identity(.valid))
    }

    /// Everything a parser says about the receipt it parsed last, every stored property included (by reflection,
    /// so that a field added later is compared too).
    static func state(_ der: [UInt8], _ parser: ReceiptParser) -> String {
        der.withUnsafeBytes { buf in
            do throws(ReceiptError) {
                try parser.parse(buf)
            } catch {
                Issue.record("the test receipt did not parse: \(error)")
            }
        }
        var s = ""
        dump(parser.fields, to: &s)
        dump(parser.container, to: &s)
        s += "reachedPayload: \(parser.reachedPayload), attributes: \(parser.attributeCount)\n"
        return s
    }

    @Test func aReceiptParsedAfterAnotherReadsAsWithAFreshParser() throws {
        let full = Self.full()
        let sparse = Self.sparse()
        let reused = ReceiptParser()
        let afterFull = Self.state(full, reused) + Self.state(sparse, reused)
        let fresh = Self.state(full, ReceiptParser()) + Self.state(sparse, ReceiptParser())
        #expect(afterFull == fresh)
        // The sparse receipt really lacks what the full one had.
        #expect(reused.fields.expirationDate == nil && reused.fields.sha1Hash == nil)
        #expect(reused.fields.inApp.count == 1 && reused.fields.inAppCount == 1)
        #expect(reused.fields.inApp[0].quantity == nil && reused.fields.inApp[0].expiresDate == nil)
        #expect(!reused.container.contentInScratch)
    }

    @Test func aReceiptThatFailsAfterAnotherShowsOnlyWhatItDecoded() throws {
        let reused = ReceiptParser()
        _ = Self.state(Self.full(), reused)
        let broken: [UInt8] = [0x30, 0x03, 0x02, 0x01]
        _ = broken.withUnsafeBytes { buf in
            #expect(throws: ReceiptError.self) { try reused.parse(buf) }
        }
        let fresh = ReceiptParser()
        broken.withUnsafeBytes { buf in _ = try? fresh.parse(buf) }
        var a = ""
        var b = ""
        dump(reused.fields, to: &a)
        dump(reused.container, to: &a)
        dump(fresh.fields, to: &b)
        dump(fresh.container, to: &b)
        #expect(a == b)
    }
}
