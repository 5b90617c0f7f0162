import Foundation
import ReceiptTestSupport
import Testing

/// Apple's roots built into the binary: the real Apple-signed receipts export valid with no `--trust-anchor`,
/// and `--trust-anchor` replaces the built-in roots.
@Suite
struct BuiltInRootsTests {
    /// The real receipts as NDJSON (`id` = file name), and which of them Apple signed (from expected.json, not
    /// from the code under test: the Xcode receipts are signed by a StoreKit test certificate).
    static func realNDJSON() throws -> (ndjson: Data, apple: Set<String>) {
        let expected = try Fixtures.expected()
        var text = ""
        var apple: Set<String> = []
        for name in Fixtures.realReceiptNames() {
            let der = try Data(contentsOf: Fixtures.realDir.appendingPathComponent(name))
            text += "{\"id\":\"\(name)\",\"receipt-data\":\"\(der.base64EncodedString())\"}\n"
            let environment = (expected[name] as? [String: Any])?["environment"] as? String ?? ""
            if !environment.hasPrefix("Xcode") { apple.insert(name) }
        }
        return (Data(text.utf8), apple)
    }

    static func temporaryDirectory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rf-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `receipts.csv` as (record_id, status, error_code) rows.
    static func rows(_ dir: URL) throws -> [(id: String, status: String, code: String)] {
        let text = try String(contentsOf: dir.appendingPathComponent("receipts.csv"), encoding: .utf8)
        var lines = text.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let header = lines.removeFirst().map(String.init)
        let id = try #require(header.firstIndex(of: "record_id"))
        let status = try #require(header.firstIndex(of: "status"))
        let code = try #require(header.firstIndex(of: "error_code"))
        return lines.map { (String($0[id]), String($0[status]), String($0[code])) }
    }

    @Test func applesReceiptsExportValidWithNoTrustAnchorGiven() throws {
        let (ndjson, apple) = try Self.realNDJSON()
        #expect(apple.count == 16)
        let dir = try Self.temporaryDirectory("builtin")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("real.ndjson")
        try ndjson.write(to: input)
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(["export", input.path, "--out", out.path, "--format", "csv"])
        #expect(status == 0, "\(err)")
        let rows = try Self.rows(out)
        #expect(rows.count == Fixtures.realReceiptNames().count)
        for row in rows {
            if apple.contains(row.id) {
                #expect(row.status == "0", "\(row)")
            } else {
                #expect(row.status == "21003" && row.code == "untrusted_chain", "\(row)")
            }
        }
        // No note about a non-Apple anchor; the last line counts valid and rejected receipts.
        #expect(!err.contains("note:"))
        let last = err.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("receiptflow export: 18 receipts: 16 valid, 2 rejected;"), "\(err)")
    }

    @Test func aTrustAnchorReplacesTheBuiltInRootsAndIsNotedOnceUnlessQuiet() throws {
        let (ndjson, apple) = try Self.realNDJSON()
        let dir = try Self.temporaryDirectory("replace")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("real.ndjson")
        try ndjson.write(to: input)
        let storeKit = Fixtures.certsDir.appendingPathComponent("StoreKitTestCertificate.cer").path
        let out = dir.appendingPathComponent("out")
        let args = ["export", input.path, "--format", "csv", "--trust-anchor", storeKit, "--trust-anchor", storeKit]
        let (status, _, err) = try runTool(args + ["--out", out.path])
        #expect(status == 0, "\(err)")
        for row in try Self.rows(out) {
            #expect(row.status == (apple.contains(row.id) ? "21003" : "0"), "\(row)")
        }
        #expect(err.components(separatedBy: "note:").count == 2, "\(err)")
        let quietOut = dir.appendingPathComponent("quiet")
        let (quietStatus, _, quietErr) = try runTool(args + ["--out", quietOut.path, "--quiet"])
        #expect(quietStatus == 0)
        #expect(quietErr.isEmpty, "\(quietErr)")
    }
}
