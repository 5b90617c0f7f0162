import Foundation
import ReceiptTestSupport
import Testing

/// `generate --customers N --unsigned`: the signed corpus's lines but for the signature bytes; an export without
/// verification reads the same rows from both, one with verification rejects every unsigned receipt.
@Suite struct GenerateUnsignedCustomersTests {
    /// Generates `customers` customers (seed 5) into `dir/name.ndjson`, unsigned when told.
    static func generate(_ dir: URL, _ name: String, ca: String, unsigned: Bool) throws -> String {
        let data = dir.appendingPathComponent("\(name).ndjson").path
        let args =
            ["generate", "--customers", "60", "--seed", "5", "--ca-dir", ca, "--out", data, "--quiet"]
            + (unsigned ? ["--unsigned"] : [])
        let (status, _, err) = try runTool(args)
        #expect(status == 0, "\(err)")
        return data
    }

    /// The rows of `table` without the columns that name the input file or hash the receipt's bytes.
    static func rows(_ out: URL, _ table: String) throws -> [[String: String]] {
        try JWSExportTests.csv(out.appendingPathComponent("\(table).csv")).map { row in
            row.filter { key, _ in key != "source" && !key.contains("sha256") }
        }
    }

    @Test func unsignedLinesDifferFromSignedOnesOnlyInTheSignatureAndTheExpectedTablesAreTheSame() throws {
        let dir = try GenerateCommandTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ca = dir.appendingPathComponent("ca").path
        let signed = try Self.generate(dir, "s", ca: ca, unsigned: false)
        let unsigned = try Self.generate(dir, "u", ca: ca, unsigned: true)
        let signedLines = try String(contentsOfFile: signed, encoding: .utf8).split(separator: "\n")
        let unsignedLines = try String(contentsOfFile: unsigned, encoding: .utf8).split(separator: "\n")
        #expect(signedLines.count == unsignedLines.count)
        #expect(signedLines.count > 300)
        var differing = 0
        for (s, u) in zip(signedLines, unsignedLines) {
            let sDER = try #require(Self.der(s))
            let uDER = try #require(Self.der(u))
            #expect(sDER.count == uDER.count)
            // The 256-byte RSA signature is the last field of the SignerInfo, at the end of the DER.
            #expect(Array(sDER.dropLast(256)) == Array(uDER.dropLast(256)))
            #expect(uDER.suffix(256).allSatisfy { $0 == 0 } || uDER.suffix(256).filter { $0 != 0 } == [0x10])
            if sDER != uDER { differing += 1 }
        }
        #expect(differing == signedLines.count)
        for table in ["purchases", "subscriptions", "events", "daily"] {
            let s = try Data(contentsOf: dir.appendingPathComponent("s.\(table).csv"))
            let u = try Data(contentsOf: dir.appendingPathComponent("u.\(table).csv"))
            // Only the source column (the file's name) may differ.
            let sText = String(decoding: s, as: UTF8.self).replacingOccurrences(of: signed, with: "FILE")
            let uText = String(decoding: u, as: UTF8.self).replacingOccurrences(of: unsigned, with: "FILE")
            #expect(sText == uText, "\(table)")
        }
    }

    @Test func withoutVerificationBothCorporaExportTheSameRows() throws {
        let dir = try GenerateCommandTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ca = dir.appendingPathComponent("ca").path
        var outs: [URL] = []
        for unsigned in [false, true] {
            let data = try Self.generate(dir, unsigned ? "u" : "s", ca: ca, unsigned: unsigned)
            let out = dir.appendingPathComponent(unsigned ? "out-u" : "out-s")
            let export = try runTool([
                "export", data, "--format", "csv", "--out", out.path, "--quiet", "--no-verify", "--user-field",
                "user_id",
            ])
            #expect(export.0 == 0, "\(export.2)")
            outs.append(out)
        }
        for table in ["receipts", "transactions", "purchases", "subscriptions", "events", "daily"] {
            let s = try Self.rows(outs[0], table)
            let u = try Self.rows(outs[1], table)
            #expect(s == u, "\(table)")
            if table == "receipts" || table == "purchases" { #expect(s.count > 100, "\(table)") }
        }
        let receipts = try JWSExportTests.csv(outs[1].appendingPathComponent("receipts.csv"))
        #expect(receipts.allSatisfy { $0["status"] == "0" })
    }

    @Test func withVerificationEveryUnsignedReceiptIsRejectedAndTheValidOnesAsABadSignature() throws {
        let dir = try GenerateCommandTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ca = dir.appendingPathComponent("ca").path
        var codes: [[String]] = []
        for unsigned in [false, true] {
            let data = try Self.generate(dir, unsigned ? "u" : "s", ca: ca, unsigned: unsigned)
            let out = dir.appendingPathComponent(unsigned ? "out-u" : "out-s")
            let export = try runTool([
                "export", data, "--format", "csv", "--out", out.path, "--quiet", "--trust-anchor", "\(ca)/root.pem",
            ])
            #expect(export.0 != 2, "\(export.2)")
            let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
            codes.append(receipts.map { $0["status"] == "0" ? "" : $0["error_code"] ?? "?" })
        }
        let (signed, unsigned) = (codes[0], codes[1])
        #expect(signed.count == unsigned.count)
        #expect(signed.filter(\.isEmpty).count > 300)
        #expect(!unsigned.contains(""))
        for (s, u) in zip(signed, unsigned) {
            // A receipt the signed corpus rejects keeps its reason; a valid one fails its signature check.
            #expect(u == (s.isEmpty ? "bad_signature" : s))
        }
    }

    @Test func noExpectedWritesTheSameCorpusAlone() throws {
        let dir = try GenerateCommandTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ca = dir.appendingPathComponent("ca").path
        let data = try Self.generate(dir, "u", ca: ca, unsigned: true)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: data))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("u.purchases.csv").path))
        let (status, _, err) = try runTool([
            "generate", "--customers", "60", "--seed", "5", "--ca-dir", ca, "--out", data, "--unsigned",
            "--no-expected",
        ])
        #expect(status == 0, "\(err)")
        #expect(err.contains("no expected tables"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: data)) == bytes)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("u.") }
        #expect(left == ["u.ndjson"])
    }

    @Test func unsignedNeedsCustomers() throws {
        let dir = try GenerateCommandTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (status, _, err) = try runTool([
            "generate", "--count", "5", "--unsigned", "--out", dir.appendingPathComponent("x.ndjson").path,
        ])
        #expect(status == 2)
        #expect(err.contains("--unsigned needs --customers"))
    }

    /// The receipt DER of an NDJSON line.
    static func der(_ line: Substring) -> [UInt8]? {
        guard let start = line.range(of: "\"receipt-data\":\"")?.upperBound,
            let end = line[start...].firstIndex(of: "\"")
        else { return nil }
        return Data(base64Encoded: String(line[start..<end])).map { Array($0) }
    }
}
