import Foundation
import ReceiptModel
import ReceiptPipeline
import Testing

@Suite struct RunSummaryTests {
    private func summary() -> RunSummary {
        var r = RunResult()
        r.counts.records = 3
        r.counts.transactions = 7
        r.counts.inputBytes = 1234
        r.counts.blankLines = 2
        r.counts.byStatus[ReceiptStatus.allCases.firstIndex(of: .valid)!] = 2
        r.counts.byStatus[ReceiptStatus.allCases.firstIndex(of: .malformed)!] = 1
        r.counts.byCode[ErrorCode.allCases.firstIndex(of: .invalidJSON)!] = 1
        r.elapsedSeconds = 0.5
        r.chainCacheHits = 1
        r.chainCacheMisses = 1
        return RunSummary(result: r, inputs: ["a.ndjson", "-"], format: "csv", verify: true, threads: 2)
    }

    @Test func writesTheCountsAtomicallyUnderTheFinalName() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-summary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try summary().write(to: dir.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["summary.json"])
        let o =
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("summary.json")))
            as! [String: Any]
        #expect(o["records"] as? Int == 3)
        #expect(o["valid"] as? Int == 2 && o["rejected"] as? Int == 1)
        #expect(o["transactions_written"] as? Int == 7)
        #expect(o["bytes_read"] as? Int == 1234 && o["blank_lines"] as? Int == 2)
        #expect((o["by_status"] as? [String: Int])?["21002"] == 1)
        #expect((o["by_error_code"] as? [String: Int])?["invalid_json"] == 1)
        #expect((o["by_error_code"] as? [String: Int])?.count == ErrorCode.allCases.count)
        #expect(o["receipts_per_second"] as? Double == 6)
        #expect((o["chain_cache"] as? [String: Int]) == ["hits": 1, "misses": 1])
        #expect(o["inputs"] as? [String] == ["a.ndjson", "-"])
    }

    /// History built under `--no-verify` is marked in summary.json and by a note after the closing line.
    @Test func saysWhenTheHistoryWasBuiltFromUnverifiedRecords() throws {
        for verify in [true, false] {
            var s = RunSummary(result: RunResult(), inputs: ["-"], format: "csv", verify: verify, threads: 1)
            let without = try JSONSerialization.jsonObject(with: Data(s.encoded())) as! [String: Any]
            #expect(without["history_from_unverified_records"] == nil)
            #expect(s.unverifiedHistoryNote == nil)
            s.history = HistorySummary(asOf: nil, purchases: 1, subscriptions: 0, spilledBytes: 0)
            let o = try JSONSerialization.jsonObject(with: Data(s.encoded())) as! [String: Any]
            #expect(o["history_from_unverified_records"] as? Bool == !verify)
            #expect(o["verify"] as? Bool == verify)
            #expect((s.unverifiedHistoryNote?.contains("unverified")) == (verify ? nil : true))
        }
    }

    @Test func saysWhereItCouldNotWrite() {
        #expect {
            try summary().write(to: "/nonexistent-dir/out")
        } throws: { e in
            "\(e)".contains("/nonexistent-dir/out/summary.json")
        }
    }
}

/// The summary's write failure is a code with the file and the reason.
@Suite struct SummaryErrorTests {
    @Test func aFolderThatIsNotThereIsCannotWriteWithThePath() {
        var r = RunResult()
        r.counts.records = 1
        let summary = RunSummary(result: r, inputs: ["-"], format: "csv", verify: false, threads: 1)
        do throws(SummaryError) {
            try summary.write(to: "/nonexistent-dir/out/")
            Issue.record("summary.json was written into a missing folder")
        } catch {
            #expect(error.code == .cannotWrite)
            #expect(error.path == "/nonexistent-dir/out/summary.json")
            #expect(error.message == "cannot write \(error.path) (\(error.reason)); check that --out is writable")
        }
    }
}
