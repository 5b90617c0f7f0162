import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// The committed sample in data/ (what the README's main command and other tests use).
@Suite struct SampleDataTests {
    static let sample = Fixtures.dataDir.appendingPathComponent("sample.ndjson.zst")
    static let truth = Fixtures.dataDir.appendingPathComponent("sample.truth.ndjson.zst")

    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        Array(bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast())
    }

    /// The sample is what `scripts/make-data.sh sample` makes today (compared decompressed, so a different
    /// libzstd version cannot fail it).
    @Test
    func committedSampleMatchesARegeneration() throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("sample.ndjson.zst")
        let factory = RecordFactory(pki: SharedPKI.pki, seed: 1, digest: .mixed, badFraction: 0.05)
        _ = try Generator.run(factory: factory, count: 2500, out: out)
        #expect(try Zstd.decompress(out) == Zstd.decompress(Self.sample))
        #expect(try Zstd.decompress(Generator.truthURL(for: out)) == Zstd.decompress(Self.truth))
    }

    /// Every receipt in the committed sample decodes to its truth line, and every kind is present.
    @Test
    func committedSampleDecodesToItsTruth() throws {
        let data = Self.lines(try Zstd.decompress(Self.sample))
        let truth = Self.lines(try Zstd.decompress(Self.truth))
        #expect(truth.count == 2500)
        var kinds: Set<String> = []
        var numbered: Set<Int> = []
        for t in truth {
            let obj = try JSONSerialization.jsonObject(with: Data(t)) as! [String: Any]
            let line = obj["line"] as! Int
            numbered.insert(line)
            let kind = obj["kind"] as! String
            kinds.insert(kind)
            guard let k = RecordKind(rawValue: kind), obj["bundle_id"] is String else { continue }
            let bytes = try #require(GeneratedLines.receiptBytes(Array(data[line - 1])), "line \(line) (\(k))")
            let (_, receipt) = try decodeReceipt(bytes)
            try GeneratedLines.expectReceipt(receipt, matches: obj)
        }
        #expect(kinds == Set(RecordKind.allCases.map(\.rawValue)))
        // Lines without a truth line are exactly the blank ones.
        for (i, l) in data.enumerated() { #expect(l.isEmpty == !numbered.contains(i + 1), "line \(i + 1)") }
    }
}
