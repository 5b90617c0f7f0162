import Foundation
import ReceiptTestSupport
import Testing

/// The committed corpus of the `jwsline` fuzz target (Fuzz/corpus/jwsline/, one input line per file) through
/// `export`: every line is accounted for, the generated seeds verify against the root committed beside them
/// (Fuzz/jwsline-root.pem), and every row's verdict is consistent.
struct JWSLineCorpusTests {
    @Test func theCorpusExportsWithEveryLineAccountedForAndTheGeneratedSeedsVerify() throws {
        let corpus = Fixtures.packageRoot.appendingPathComponent("Fuzz/corpus/jwsline")
        let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        try #require(!names.isEmpty)
        let lines = try names.map { name in
            try String(decoding: Data(contentsOf: corpus.appendingPathComponent(name)), as: UTF8.self)
        }
        #expect(lines.allSatisfy { !$0.contains("\n") })
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let root = Fixtures.packageRoot.appendingPathComponent("Fuzz/jwsline-root.pem").path
        let out = try JWSExportTests.export(lines, ["--format", "csv", "--trust-anchor", root], in: dir)
        let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
        #expect(Set(receipts.compactMap { $0["line"].flatMap { Int($0) } }) == Set(1...lines.count))
        for row in receipts {
            #expect((row["status"] == "0") == (row["error_code"] == ""), "line \(row["line"] ?? "")")
            #expect(row["verified"] == "false" || row["status"] == "0", "line \(row["line"] ?? "")")
        }
        let generated = Set(names.indices.filter { names[$0].hasPrefix("generated-") }.map { String($0 + 1) })
        let verified = receipts.filter { generated.contains($0["line"] ?? "") && $0["verified"] == "true" }
        #expect(verified.count > generated.count / 2)
    }
}
