import Foundation
import ReceiptTestSupport
import Testing

/// `receiptflow bench`: the export measured against the RSA ceiling, JSON for CI benchmark trackers.
@Suite
struct BenchCommandTests {
    @Test func writesTheThreeMeasurementsAndFailsUnderTheMinimumRatio() throws {
        let (ndjson, _) = try BuiltInRootsTests.realNDJSON()
        let dir = try BuiltInRootsTests.temporaryDirectory("bench")
        defer { try? FileManager.default.removeItem(at: dir) }
        let corpus = dir.appendingPathComponent("real.ndjson")
        try ndjson.write(to: corpus)
        let json = dir.appendingPathComponent("bench.json")
        let base = ["bench", corpus.path, "--threads", "1", "--ceiling-seconds", "0.2", "--format", "csv"]
        let (status, out, err) = try runTool(base + ["--json", json.path])
        #expect(status == 0, "\(err)")
        let text = String(decoding: out, as: UTF8.self)
        #expect(text.contains("18 receipts (16 valid, 2 rejected)"), "\(text)")
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [[String: Any]])
        #expect(entries.map { $0["unit"] as? String } == ["receipts/s", "verifications/s", "ratio"])
        let values = entries.compactMap { ($0["value"] as? NSNumber)?.doubleValue }
        #expect(values.count == 3)
        #expect(values.allSatisfy { $0 > 0 })
        #expect(entries.allSatisfy { ($0["name"] as? String)?.isEmpty == false })
        // A --json file that cannot be written is named, with the step that failed and the system's reason.
        let unwritable = dir.appendingPathComponent("missing/bench.json").path
        let (failed, _, failedErr) = try runTool(base + ["--json", unwritable])
        #expect(failed == 1)
        #expect(failedErr.contains("the --json file \(unwritable) was not written: cannot create "), "\(failedErr)")
        #expect(failedErr.contains(String(cString: strerror(ENOENT))), "\(failedErr)")
        // A ratio is throughput over ceiling, so no machine reaches 1000.
        let (failing, _, failingErr) = try runTool(base + ["--min-ratio", "1000"])
        #expect(failing == 1)
        #expect(failingErr.contains("below --min-ratio"))
    }

    @Test func aMissingCorpusIsAUsageError() throws {
        let (status, _, err) = try runTool(["bench"])
        #expect(status == 2)
        #expect(err.hasSuffix("Run `receiptflow bench --help` for the options.\n"))
    }
}
