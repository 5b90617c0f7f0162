import Foundation
import ReceiptTestSupport
import Testing

/// Whether `python3` can import pyarrow (`scripts/check-truth.py` reads Parquet with it).
enum Python {
    static let pyarrowAvailable: Bool = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import pyarrow"]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()
}

/// A corpus generated with device identifiers (a fifth of them another device's) exports with every record's
/// `device_hash_matches`, status and fields as its ground truth says, through CSV and Parquet
/// (`scripts/check-truth.py`, which reads Parquet with pyarrow).
@Suite(.enabled(if: Python.pyarrowAvailable, "needs python3 with pyarrow"))
struct DeviceTruthTests {
    @Test(arguments: ["csv", "parquet"]) func exportAgreesWithTheTruth(format: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("device-truth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.ndjson").path
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("rf-hardening-tests-ca").path
        let (g, _, gErr) = try runTool([
            "generate", "--count", "300", "--out", input, "--seed", "9", "--bad-fraction", "0.3", "--ca-dir", ca,
            "--device-ids", "--device-mismatch-fraction", "0.2", "--quiet",
        ])
        try #require(g == 0, "\(gErr)")
        let truthPath = dir.appendingPathComponent("in.truth.ndjson").path
        let truth = try String(contentsOfFile: truthPath, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        // The corpus holds matches, mismatches and records without a check.
        let outcomes = truth.map { $0["device_hash_matches"] as? Bool }
        #expect(outcomes.contains(true) && outcomes.contains(false) && outcomes.contains(nil))

        let out = dir.appendingPathComponent("out").path
        let (e, _, eErr) = try runTool([
            "export", input, "--out", out, "--format", format, "--trust-anchor", "\(ca)/root.pem",
            "--device-id-field", "device_id", "--quiet",
        ])
        try #require(e == 0, "\(eErr)")
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = [
            "python3", Fixtures.packageRoot.appendingPathComponent("scripts/check-truth.py").path, out, truthPath,
            "--format", format,
        ]
        let pipe = Pipe()
        check.standardOutput = pipe
        try check.run()
        let report = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        #expect(check.terminationStatus == 0, "\(report)")
        #expect(report.contains("300 records"))
    }
}
