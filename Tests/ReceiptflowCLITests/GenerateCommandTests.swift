import Foundation
import ReceiptTestSupport
import Testing

@Suite struct GenerateCommandTests {
    static func tempDir() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func writesRecordsTruthAndReusableCA() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ca = dir.appendingPathComponent("ca").path
        let out = dir.appendingPathComponent("r.ndjson").path
        let args = ["generate", "--count", "40", "--out", out, "--seed", "4", "--bad-fraction", "0.25", "--ca-dir", ca]
        let (status, _, err) = try runTool(args)
        #expect(status == 0, "\(err)")
        #expect(err.contains("receipts/s"))
        #expect(FileManager.default.fileExists(atPath: "\(ca)/root.pem"))
        #expect(FileManager.default.fileExists(atPath: "\(ca)/leaf.key.pem"))
        let truth = try String(contentsOfFile: dir.appendingPathComponent("r.truth.ndjson").path, encoding: .utf8)
        #expect(truth.split(separator: "\n").count == 40)
        let first = try Data(contentsOf: URL(fileURLWithPath: out))

        // A second run reuses the CA directory and gives the same bytes.
        let (again, _, _) = try runTool(args + ["--quiet"])
        #expect(again == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == first)
    }

    @Test func keepsTheDefaultTestCAUnderHOME() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("r.ndjson").path
        let (status, _, err) = try runTool(
            ["generate", "--count", "2", "--out", out, "--quiet"], environment: ["HOME": dir.path])
        #expect(status == 0, "\(err)")
        #expect(FileManager.default.fileExists(atPath: dir.path + "/.cache/receiptflow/test-ca/root.pem"))
    }

    @Test(arguments: [
        ["generate", "--out", "x.ndjson"],
        ["generate", "--count", "5"],
        ["generate", "--count", "5", "--out", "x.ndjson", "--digest", "md5"],
        ["generate", "--count", "5", "--out", "x.ndjson", "--bad-fraction", "1.5"],
        ["generate", "--count", "-1", "--out", "x.ndjson"],
    ])
    func rejectsBadUsageWithStatus2(args: [String]) throws {
        let (status, _, err) = try runTool(args)
        #expect(status == 2)
        #expect(err.hasSuffix("Run `receiptflow generate --help` for the options.\n"))
        #expect(err.split(separator: "\n").count == 2)
    }

    @Test func reportsAnUnwritableOutputWithStatus1() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (status, _, err) = try runTool([
            "generate", "--count", "3", "--out", "/nonexistent-dir/x.ndjson", "--ca-dir", dir.path,
        ])
        #expect(status == 1)
        #expect(err.contains("/nonexistent-dir"))
    }
}
