import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptSynth
import Testing

@Suite struct RecordFactoryTests {
    static let pki = SharedPKI.pki

    /// Every generated receipt decodes back, with ReceiptDER's parser, to exactly the fields the truth names;
    /// records that must not decode do not.
    @Test func decoderReadsEveryGeneratedReceiptBackToTheTruth() throws {
        let factory = RecordFactory(pki: Self.pki, seed: 42, badFraction: 0.3)
        var kinds: [RecordKind: Int] = [:]
        var encodings: Set<String> = []
        var transactions = 0
        for i in 0..<3000 {
            let r = factory.record(i)
            kinds[r.kind, default: 0] += 1
            let t = try GeneratedLines.truth(r)
            #expect(t["kind"] as? String == r.kind.rawValue)
            #expect(t["status"] as? Int == r.kind.status)
            let bytes = GeneratedLines.receiptBytes(r.line)
            switch r.kind {
            case .invalidJSON:
                #expect((try? JSONSerialization.jsonObject(with: Data(r.line)) as? [String: Any]) == nil)
                continue
            case .oversizedLine:
                #expect(r.line.count > RecordFactory.maxRecordSize)
                #expect(t["id"] is NSNull)
                continue
            case .missingKey, .invalidBase64, .emptyReceipt:
                #expect(bytes == nil || bytes!.isEmpty, "\(r.kind) line \(i) decoded")
                continue
            case .truncatedDER, .garbageDER:
                let b = try #require(bytes)
                #expect(throws: ReceiptError.self) { try decodeReceipt(b) }
                #expect(t["bundle_id"] is NSNull)
                continue
            default:
                break
            }
            let b = try #require(bytes, "record \(i) (\(r.kind)) has no readable receipt")
            let (container, receipt) = try decodeReceipt(b)
            encodings.insert(t["encoding"] as! String)
            #expect((container.encoding == .der ? "der" : "ber") == t["encoding"] as? String)
            #expect(String(describing: container.digestAlgorithm.name) == t["digest_algorithm"] as? String)
            transactions += try GeneratedLines.expectReceipt(receipt, matches: t)
        }
        // Every variant was exercised, in both encodings, with a subscription tail among the transactions.
        #expect(
            Set(kinds.keys) == Set(RecordKind.allCases),
            "missing kinds: \(Set(RecordKind.allCases).subtracting(kinds.keys))")
        #expect(encodings == ["der", "ber"])
        #expect(transactions > 3000)
    }

    @Test func recordsArePureFunctionsOfSeedAndIndex() {
        let a = RecordFactory(pki: Self.pki, seed: 9, badFraction: 0.5)
        let b = RecordFactory(pki: Self.pki, seed: 9, badFraction: 0.5)
        let c = RecordFactory(pki: Self.pki, seed: 10, badFraction: 0.5)
        for i in [0, 1, 17, 999] {
            #expect(a.record(i).line == b.record(i).line)
            #expect(a.record(i).truthTail == b.record(i).truthTail)
            #expect(a.record(i).line != c.record(i).line)
        }
    }

    @Test func digestChoiceIsHonoured() throws {
        for (choice, name) in [(DigestChoice.sha1, "sha1"), (.sha256, "sha256")] {
            let f = RecordFactory(pki: Self.pki, seed: 3, digest: choice, badFraction: 0)
            for i in 0..<20 {
                let t = try GeneratedLines.truth(f.record(i))
                #expect(t["digest_algorithm"] as? String == name)
            }
        }
    }
}
