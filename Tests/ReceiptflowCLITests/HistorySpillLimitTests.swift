import Foundation
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// The purchase history under a descriptor limit of 64 and the smallest memory budget: the spill makes far more
/// sorted runs than 64 descriptors can hold open, and the export still completes with the tables of an
/// unconstrained run, byte for byte.
@Suite struct HistorySpillLimitTests {
    /// 40 receipts of 500 purchases each (20,000 distinct purchases in about 2,000 subscriptions): several MB of
    /// spill, over a thousand sorted runs at the smallest budget.
    static func input(in dir: URL) throws -> URL {
        let start: Int64 = 1_600_000_000_000
        var lines: [String] = []
        for r in 0..<40 {
            var b = PayloadBuilder()
            b.utf8(0, "Production")
            b.utf8(2, "com.example.hostile")
            b.utf8(3, "1.0")
            b.integer(1, 1_234_567)
            b.date(12, start + Int64(r) * 86_400_000)
            b.utf8(19, "1.0")
            for k in 0..<500 {
                let id = r * 500 + k
                var p = PayloadBuilder()
                p.integer(1701, 1)
                p.utf8(1702, "com.example.plan\(k % 7)")
                p.utf8(1703, "\(2_000_000_000 + id)")
                p.utf8(1705, "\(2_000_000_000 + id / 10 * 10)")
                p.date(1704, start + Int64(id) * 60_000)
                p.date(1708, start + Int64(id) * 60_000 + 30 * 86_400_000)
                b.inApp(p)
            }
            lines.append(Hostile.line(Hostile.signed(b.encode()), id: "r\(r)"))
        }
        let url = dir.appendingPathComponent("in.ndjson")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
        return url
    }

    /// Runs the export through `bash -c 'ulimit -n LIMIT; exec ...'` (no limit when nil) with `environment` added.
    static func export(_ args: [String], limit: Int?, environment: [String: String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        let prefix = limit.map { "ulimit -n \($0) || exit 97; " } ?? ""
        p.arguments = ["-c", prefix + #"exec "$0" "$@""#, Fixtures.executable.path] + args
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: e, as: UTF8.self))
    }

    @Test func underUlimit64WithTheSmallestBudgetTheHistoryEqualsAnUnconstrainedRun() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = try Self.input(in: dir)
        func args(_ out: URL) -> [String] {
            [
                "export", input.path, "--out", out.path, "--format", "csv", "--trust-anchor", Hostile.rootPEM,
                "--threads", "2", "--quiet",
            ]
        }
        let free = dir.appendingPathComponent("free")
        let (freeStatus, freeErr) = try Self.export(args(free), limit: nil, environment: [:])
        #expect(freeStatus == 0, "\(freeErr)")
        let tight = dir.appendingPathComponent("tight")
        let (status, err) = try Self.export(
            args(tight), limit: 64, environment: ["RECEIPTFLOW_HISTORY_MEMORY": "65536"])
        #expect(status == 0, "\(err)")
        for table in ["receipts", "transactions", "purchases", "subscriptions"] {
            let a = try Data(contentsOf: free.appendingPathComponent("\(table).csv"))
            let b = try Data(contentsOf: tight.appendingPathComponent("\(table).csv"))
            #expect(a == b, "\(table).csv differs")
        }
        let purchases = try JWSExportTests.csv(tight.appendingPathComponent("purchases.csv"))
        #expect(purchases.count == 20_000)
        #expect(try JWSExportTests.csv(tight.appendingPathComponent("subscriptions.csv")).count == 2_000)
        // The constrained run did spill (the unconstrained one fits in memory).
        let summary = try String(contentsOf: tight.appendingPathComponent("summary.json"), encoding: .utf8)
        #expect(!summary.contains(#""spilled_bytes" : 0"#), "\(summary)")
        #expect(
            !((try? FileManager.default.contentsOfDirectory(atPath: tight.path)) ?? []).contains {
                $0.hasPrefix(".receiptflow-history")
            })
    }
}
