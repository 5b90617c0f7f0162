import Foundation
import ReceiptTestSupport
import Testing

/// What a person reads at the end of an export: the closing line (receipts and JWS apart, the history with its
/// states and as-of time), the hint when most records share one likely-caused rejection, and `--max-reject-rate`.
@Suite
struct ExportFeedbackTests {
    static let jwsSample = Fixtures.dataDir.appendingPathComponent("sample-jws.ndjson.zst").path
    static let jwsRoot = Fixtures.dataDir.appendingPathComponent("test-jws-root.pem").path

    /// The real receipts as NDJSON with the receipt under `key`.
    static func realReceipts(under key: String, in dir: URL) throws -> String {
        var text = ""
        for name in Fixtures.realReceiptNames() {
            let der = try Data(contentsOf: Fixtures.realDir.appendingPathComponent(name))
            text += "{\"id\":\"\(name)\",\"\(key)\":\"\(der.base64EncodedString())\"}\n"
        }
        let path = dir.appendingPathComponent("real-\(key).ndjson").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func summary(_ out: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func lastLine(_ err: String) -> String { err.split(separator: "\n").last.map(String.init) ?? "" }

    @Test func testDataVerifiedAgainstTheBuiltInRootsIsToldToGiveItsRoot() throws {
        let dir = try BuiltInRootsTests.temporaryDirectory("hint-roots")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(["export", Self.jwsSample, "--out", out.path, "--format", "csv"])
        #expect(status == 0, "\(err)")
        let last = Self.lastLine(err)
        #expect(last.contains("were rejected as untrusted_chain"), "\(err)")
        #expect(last.contains("--trust-anchor data/test-root.pem"), "\(err)")
        // With the sample's root the same data has no hint.
        let (again, _, err2) = try runTool([
            "export", Self.jwsSample, "--out", out.path, "--format", "csv", "--overwrite", "--trust-anchor",
            Self.jwsRoot,
        ])
        #expect(again == 0, "\(err2)")
        #expect(!err2.contains("were rejected as"), "\(err2)")
    }

    @Test func recordsWithoutTheReceiptKeyAreToldToNameItWithField() throws {
        let dir = try BuiltInRootsTests.temporaryDirectory("hint-field")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = try Self.realReceipts(under: "blob", in: dir)
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(["export", input, "--out", out.path, "--format", "csv"])
        #expect(status == 0, "\(err)")
        #expect(Self.lastLine(err).contains("all 18 records were rejected as missing_field"), "\(err)")
        #expect(Self.lastLine(err).contains("--field NAME"), "\(err)")
        let (fixed, _, err2) = try runTool([
            "export", input, "--out", out.path, "--format", "csv", "--overwrite", "--field", "blob",
        ])
        #expect(fixed == 0)
        #expect(Self.lastLine(err2).hasPrefix("receiptflow export: 18 receipts: 16 valid, 2 rejected;"), "\(err2)")
    }

    @Test func aPrettyPrintedJSONArrayIsToldToBecomeOneObjectPerLine() throws {
        let dir = try BuiltInRootsTests.temporaryDirectory("hint-array")
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = try String(contentsOfFile: try Self.realReceipts(under: "receipt-data", in: dir), encoding: .utf8)
            .split(separator: "\n")
        let array = "[\n" + lines.map { "  " + $0 }.joined(separator: ",\n") + "\n]\n"
        let input = dir.appendingPathComponent("array.json").path
        try Data(array.utf8).write(to: URL(fileURLWithPath: input))
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(["export", input, "--out", out.path, "--format", "csv"])
        #expect(status == 0, "\(err)")
        #expect(Self.lastLine(err).contains("JSON array"), "\(err)")
        #expect(Self.lastLine(err).contains("jq -c '.[]'"), "\(err)")
    }

    @Test func aCSVFileWithoutAReceiptColumnIsToldToNameIt() throws {
        let dir = try BuiltInRootsTests.temporaryDirectory("hint-csv")
        defer { try? FileManager.default.removeItem(at: dir) }
        var csv = "id,payload\n"
        for name in Fixtures.realReceiptNames() {
            let der = try Data(contentsOf: Fixtures.realDir.appendingPathComponent(name))
            csv += "\(name),\(der.base64EncodedString())\n"
        }
        let input = dir.appendingPathComponent("receipts.csv").path
        try Data(csv.utf8).write(to: URL(fileURLWithPath: input))
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(["export", input, "--out", out.path, "--format", "csv"])
        #expect(status == 0, "\(err)")
        #expect(Self.lastLine(err).contains("CSV"), "\(err)")
        #expect(Self.lastLine(err).contains("--field NAME"), "\(err)")
    }

    @Test func aRejectedShareAboveTheLimitExitsWithStatus3AfterWritingEverything() throws {
        let dir = try BuiltInRootsTests.temporaryDirectory("reject-rate")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = try Self.realReceipts(under: "receipt-data", in: dir)
        // 2 of 18 rejected: 11.1%.
        let out = dir.appendingPathComponent("out")
        let (over, _, err) = try runTool([
            "export", input, "--out", out.path, "--format", "csv", "--max-reject-rate", "0.1", "--quiet",
        ])
        #expect(over == 3, "\(err)")
        #expect(err.contains("2 of 18 records were rejected (11.1%), more than --max-reject-rate 0.1"), "\(err)")
        #expect(try Self.summary(out)["rejected"] as? Int == 2)
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("subscriptions.csv").path))
        let (within, _, err2) = try runTool([
            "export", input, "--out", out.path, "--format", "csv", "--max-reject-rate", "0.2", "--overwrite",
        ])
        #expect(within == 0, "\(err2)")
        // A parts run checks the whole run's share too.
        let parts = dir.appendingPathComponent("parts")
        let (partsStatus, _, err3) = try runTool([
            "export", input, "--out", parts.path, "--part-records", "5", "--max-reject-rate", "0", "--quiet",
        ])
        #expect(partsStatus == 3, "\(err3)")
        #expect(FileManager.default.fileExists(atPath: parts.appendingPathComponent("summary.json").path))
        // Standard output too.
        let (stdoutStatus, _, _) = try runTool([
            "export", input, "--out", "-", "--format", "csv", "--max-reject-rate", "0.05", "--quiet",
        ])
        #expect(stdoutStatus == 3)
    }

    @Test(arguments: ["-0.1", "1.5", "half", "nan"])
    func aRejectRateOutside0To1IsAUsageError(rate: String) throws {
        let (status, _, err) = try runTool(["export", "x.ndjson", "--out", "unused", "--max-reject-rate", rate])
        #expect(status == 2)
        #expect(err.contains("--max-reject-rate takes a number from 0 to 1"), "\(err)")
    }

    @Test func theClosingLineAndSummaryCountReceiptsAndJWSApartWithTheHistory() throws {
        let dir = try BuiltInRootsTests.temporaryDirectory("closing")
        defer { try? FileManager.default.removeItem(at: dir) }
        let receipts = try Self.realReceipts(under: "receipt-data", in: dir)
        let out = dir.appendingPathComponent("out")
        // The JWS test root replaces Apple's: the 18 real receipts are rejected, the JWS judged on their own.
        let (status, _, err) = try runTool([
            "export", receipts, Self.jwsSample, "--out", out.path, "--format", "csv", "--trust-anchor", Self.jwsRoot,
        ])
        #expect(status == 0, "\(err)")
        let s = try Self.summary(out)
        let kinds = try #require(s["by_record_kind"] as? [String: [String: Int]])
        let receipt = try #require(kinds["receipt"])
        let jws = try #require(kinds["jws"])
        #expect(receipt == ["records": 18, "valid": 0, "rejected": 18])
        #expect(jws["records"]! + 18 == s["records"] as? Int)
        #expect(jws["valid"] == s["valid"] as? Int)
        #expect(jws["valid"]! + jws["rejected"]! == jws["records"]!)
        let history = try #require(s["history"] as? [String: Any])
        let byState = try #require(history["subscriptions_by_state"] as? [String: Int])
        #expect(byState.values.reduce(0, +) == history["subscriptions"] as? Int)
        #expect(Set(byState.keys).isSuperset(of: ["active", "expired", "unknown", "not_started"]))
        // The subscriptions table agrees with the counts by state.
        let table = try String(contentsOf: out.appendingPathComponent("subscriptions.csv"), encoding: .utf8)
        var rows = table.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let stateColumn = try #require(rows.removeFirst().firstIndex(of: "state"))
        var fromTable: [String: Int] = [:]
        for row in rows { fromTable[String(row[stateColumn]), default: 0] += 1 }
        #expect(fromTable == byState.filter { $0.value > 0 })

        let line = Self.lastLine(err)
        let asOf = try #require(s["as_of"] as? String)
        let expected =
            "receiptflow export: \(s["records"]!) records: 18 receipts (0 valid, 18 rejected) and "
            + "\(jws["records"]!) JWS (\(jws["valid"]!) valid, \(jws["rejected"]!) rejected); "
            + "\(s["transactions_written"]!) transactions; \(history["purchases"]!) purchases, "
            + "\(history["subscriptions"]!) subscriptions ("
        #expect(line.hasPrefix(expected), "\(line)")
        for (state, n) in byState where n > 0 { #expect(line.contains("\(n) \(state)"), "\(line)") }
        #expect(line.hasSuffix(") as of \(asOf); written to \(out.path)"), "\(line)")
    }
}
