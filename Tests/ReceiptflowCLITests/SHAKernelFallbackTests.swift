import Foundation
import Testing

/// With the two-lane SHA kernels turned off (RECEIPTFLOW_NO_SHA_X2=1: OpenSSL for every receipt_sha256 and signed
/// digest, what a CPU without the SHA extensions runs) the exports are byte for byte those of a normal run.
struct SHAKernelFallbackTests {
    @Test func exportsAreIdenticalWithAndWithoutTheSHAKernels() throws {
        let tmp = FileManager.default.temporaryDirectory
        let dir = tmp.appendingPathComponent("rf-sha-fallback-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // The resume tests' CA folder: its keys take seconds to derive, and the folder is kept between runs.
        let ca = tmp.appendingPathComponent("rf-resume-tests-ca").path
        let input = dir.appendingPathComponent("in.ndjson.zst").path
        let (status, _, err) = try runTool([
            "generate", "--count", "900", "--seed", "47", "--bad-fraction", "0.2", "--digest", "mixed", "--out", input,
            "--ca-dir", ca, "--quiet",
        ])
        try #require(status == 0, "generate: \(err)")
        for format in ["csv", "parquet"] {
            var outputs: [URL] = []
            for off in [false, true] {
                let out = dir.appendingPathComponent("\(format)-\(off ? "openssl" : "kernels")")
                let (status, _, err) = try runTool(
                    [
                        "export", input, "--trust-anchor", ca + "/root.pem", "--format", format, "--out", out.path,
                        "--threads", "2", "--quiet",
                    ], environment: off ? ["RECEIPTFLOW_NO_SHA_X2": "1"] : [:])
                // Exit status 0 or 1 (some receipts rejected); anything else is a failed run.
                #expect(status == 0 || status == 1, "\(format), kernels off: \(off): \(err)")
                outputs.append(out)
            }
            // summary.json holds timings; the tables are compared.
            let files = try FileManager.default.contentsOfDirectory(atPath: outputs[0].path).filter {
                $0 != "summary.json"
            }
            let tables = ["receipts", "transactions", "renewals", "purchases", "subscriptions"]
            #expect(Set(files) == Set(tables.map { "\($0).\(format)" }), "\(format): \(files)")
            for name in files {
                let a = try Data(contentsOf: outputs[0].appendingPathComponent(name))
                let b = try Data(contentsOf: outputs[1].appendingPathComponent(name))
                #expect(a == b, "\(format) \(name) differs with the SHA kernels off")
                // Receipts only: the renewals table (JWS renewal infos) has no rows.
                #expect(a.count > 1000 || name.hasPrefix("renewals"), "\(name)")
            }
            if format == "csv" {
                // Both digest algorithms appear, and receipts verified: the kernels had pairs of each to hash.
                let text = try String(contentsOf: outputs[0].appendingPathComponent("receipts.csv"), encoding: .utf8)
                #expect(text.contains(",true,") && text.contains(",sha1,") && text.contains(",sha256,"))
            }
        }
    }
}
