import Foundation
import ReceiptModel
import ReceiptPipeline
import Testing

@Suite struct BaseSummaryTests {
    private func object(_ s: RunSummary) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(s.encoded())) as! [String: Any]
    }

    @Test func aRunOnABaseNamesItsFolderRunAndStateChecksum() throws {
        var s = RunSummary(result: RunResult(), inputs: ["day2.ndjson"], format: "csv", verify: true, threads: 1)
        #expect(try object(s)["base"] == nil)
        #expect(try object(s)["merged"] == nil)
        s.base = BaseSummary(folder: "runs/day1", run: 3, stateSHA256: String(repeating: "ab", count: 32))
        let base = try #require(try object(s)["base"] as? [String: Any])
        #expect(base["folder"] as? String == "runs/day1")
        #expect(base["run"] as? Int == 3)
        #expect(base["state_sha256"] as? String == String(repeating: "ab", count: 32))
    }

    @Test func aMergeListsEveryRunInOrder() throws {
        var s = RunSummary(result: RunResult(), inputs: [], format: "csv", verify: true, threads: 1)
        s.merged = [
            BaseSummary(folder: "a", run: 1, stateSHA256: "00"), BaseSummary(folder: "b", run: 2, stateSHA256: "11"),
        ]
        let merged = try #require(try object(s)["merged"] as? [[String: Any]])
        #expect(merged.map { $0["folder"] as? String } == ["a", "b"])
        #expect(merged.map { $0["run"] as? Int } == [1, 2])
    }
}
