import Foundation
import ReceiptDER
import ReceiptHistory
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// Edge cases of what the commands read, end to end: blank lines of any length, UTF-16 inputs, damaged trust
/// anchor bundles, leap seconds, duplicate JSON keys and a generator output that is a folder. Each gets a
/// specific message or the documented reading, never a misleading one.
@Suite struct InputEdgeCaseTests {
    static func tempDir() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rf-edges-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `export INPUT --out DIR --format ndjson` with the test CA; the status, standard error, the receipts rows and
    /// summary.json (empty when the run failed).
    static func export(_ input: URL, in dir: URL, _ extra: [String] = []) throws -> (
        status: Int32, err: String, rows: [[String: Any]], summary: [String: Any]
    ) {
        let out = dir.appendingPathComponent("out-\(UUID().uuidString)")
        let (status, _, err) = try runTool(
            [
                "export", input.path, "--out", out.path, "--format", "ndjson", "--trust-anchor", Hostile.rootPEM,
                "--threads", "2", "--quiet",
            ] + extra)
        guard status == 0 else { return (status, err, [], [:]) }
        let rows = try Data(contentsOf: out.appendingPathComponent("receipts.ndjson")).split(separator: 0x0A).map {
            try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any])
        }
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("summary.json")))
                as? [String: Any])
        return (status, err, rows, summary)
    }

    static let valid = Hostile.line(Hostile.signed(Hostile.basePayload().encode()), id: "valid")

    // MARK: - Blank lines

    @Test func aBlankLineLongerThanTheRecordLimitIsABlankLine() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.ndjson")
        // The limit is above a receipt line's length and below every blank line's.
        #expect(Self.valid.utf8.count < 16_384)
        let blanks = [
            String(repeating: " ", count: 20_000), String(repeating: "\t \r", count: 8_000),
            String(repeating: " ", count: 200_000),
        ]
        let text = [Self.valid] + blanks + [String(repeating: " ", count: 20_000) + "x", Self.valid]
        try Data(text.joined(separator: "\n").utf8).write(to: input)
        let e = try Self.export(input, in: dir, ["--max-record-size", "16384"])
        #expect(e.status == 0, "\(e.err)")
        // Rows for lines 1, 5 (blanks then a letter: too large) and 6 only.
        #expect(e.rows.map { $0["line"] as? Int } == [1, 5, 6])
        #expect(e.rows.map { $0["error_code"] as? String } == [nil, "record_too_large", nil])
        #expect(e.summary["blank_lines"] as? Int == 3)
    }

    // MARK: - UTF-16

    @Test func aUTF16InputIsNamedWithHowToConvertIt() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = Self.valid + "\n"
        let le = text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let be = text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        for (name, bytes, encoding) in [
            ("bom.ndjson", [0xFF, 0xFE] + le, "UTF-16"), ("le.ndjson", le, "UTF-16LE"), ("be.ndjson", be, "UTF-16BE"),
        ] {
            let input = dir.appendingPathComponent(name)
            try Data(bytes).write(to: input)
            let e = try Self.export(input, in: dir)
            #expect(e.status == 1, "\(name)")
            #expect(e.err.contains("UTF-16"), "\(e.err)")
            #expect(e.err.contains("iconv -f \(encoding) -t UTF-8"), "\(e.err)")
            #expect(!e.err.contains("binary data"), "\(e.err)")
            // The command works: the converted file exports.
            if let converted = try ToolFilter.run("iconv", ["-f", encoding, "-t", "UTF-8"], Array(bytes)) {
                let utf8 = dir.appendingPathComponent("converted-" + name)
                try Data(converted).write(to: utf8)
                let again = try Self.export(utf8, in: dir)
                #expect(again.status == 0 && again.rows.count == 1, "\(again.err)")
            }
        }
    }

    // MARK: - Trust anchor bundles

    @Test func aTrustAnchorBundleWithADamagedBlockFailsTheRunNamingTheBlock() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let root = try String(contentsOfFile: Hostile.rootPEM, encoding: .utf8)
        let rootLines = root.split(separator: "\n").count
        let input = dir.appendingPathComponent("in.ndjson")
        try Data((Self.valid + "\n").utf8).write(to: input)
        let bundles = [
            root + "-----BEGIN CERTIFICATE-----\nMIIBszCC!!!!AgIU\n-----END CERTIFICATE-----\n",
            root + "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n",
        ]
        for (k, bundle) in bundles.enumerated() {
            let pem = dir.appendingPathComponent("bundle-\(k).pem")
            try Data(bundle.utf8).write(to: pem)
            let out = dir.appendingPathComponent("out-\(k)")
            let (status, _, err) = try runTool([
                "export", input.path, "--out", out.path, "--trust-anchor", pem.path, "--quiet",
            ])
            #expect(status == 1)
            #expect(err.contains("PEM block 2 (line \(rootLines + 1))"), "\(err)")
            #expect(!err.contains("PEMFailure"), "\(err)")
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("summary.json").path))
        }
    }

    // MARK: - Leap seconds

    @Test func aLeapSecondIsTheNextMinutesFirstInstantInReceiptDatesAndInAsOf() throws {
        let texts = [
            "2016-12-31T23:59:60Z", "2016-12-31T23:59:60.500Z", "2017-01-01T01:59:60+02:00", "2015-06-30T23:59:60Z",
        ]
        for text in texts {
            let receipt = Array(text.utf8).withUnsafeBytes { DateParser.parse($0) }
            let asOf = AsOfDate.parse(text)
            #expect(receipt == .millis(try #require(asOf)), "\(text)")
        }
        #expect(AsOfDate.parse("2016-12-31T23:59:60Z") == 1_483_228_800_000)  // 2017-01-01T00:00:00Z
        #expect(AsOfDate.parse("2016-12-31T23:59:60.500Z") == 1_483_228_800_500)
        #expect(AsOfDate.parse("2016-12-31T23:59:61Z") == nil)

        // End to end: a receipt created at the leap second, and --as-of the leap second.
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        var b = PayloadBuilder()
        b.utf8(0, "Production")
        b.utf8(2, "com.example.hostile")
        b.utf8(3, "1.0")
        b.integer(1, 1_234_567)
        b.raw(12, DER.tlv(DER.tagIA5String, Array("2020-12-31T23:59:60Z".utf8)))
        b.utf8(19, "1.0")
        var p = Hostile.purchase(1)
        p.utf8(1708, "2021-01-31T00:00:00Z")
        b.inApp(p)
        let input = dir.appendingPathComponent("in.ndjson")
        try Data((Hostile.line(Hostile.signed(b.encode()), id: "leap") + "\n").utf8).write(to: input)
        let e = try Self.export(input, in: dir, ["--as-of", "2020-12-31T23:59:60Z"])
        #expect(e.status == 0, "\(e.err)")
        let receipt = try #require(e.rows.first?["receipt"] as? [String: Any])
        #expect(receipt["receipt_creation_date_ms"] as? String == "1609459200000")  // 2021-01-01T00:00:00Z
        let asOf = e.summary["as_of"] as? String
        #expect(asOf?.hasPrefix("2021-01-01T00:00:00") == true, "\(e.summary)")
    }

    // MARK: - Duplicate keys

    @Test func aDuplicateKeyCountsWithItsLastValue() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = Data(Hostile.signed(Hostile.basePayload().encode())).base64EncodedString()
        let lines = [
            #"{"id":"first","receipt-data":"AAAA","id":"last","receipt-data":"\#(good)"}"#,
            #"{"id":"first","receipt-data":"\#(good)","id":"last","receipt-data":"AAAA"}"#,
        ]
        let input = dir.appendingPathComponent("in.ndjson")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: input)
        let e = try Self.export(input, in: dir)
        #expect(e.status == 0, "\(e.err)")
        #expect(e.rows.map { $0["record_id"] as? String } == ["last", "last"])
        #expect(e.rows.first?["status"] as? Int == 0)
        #expect(e.rows.last?["status"] as? Int != 0)
    }

    // MARK: - generate --out

    @Test func generateIntoAnExistingFolderSaysItIsAFolderBeforeAnyWork() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ca = dir.appendingPathComponent("ca").path
        for mode in [["--count", "2"], ["--customers", "2"], ["--jws", "--count", "2"]] {
            let (status, _, err) = try runTool(["generate"] + mode + ["--out", dir.path, "--ca-dir", ca])
            #expect(status == 1, "\(mode)")
            #expect(err.contains("--out '\(dir.path)': it is a folder"), "\(err)")
            #expect(err.contains("give the path of the file to write"), "\(err)")
            // Refused before the test CA is even made.
            #expect(!FileManager.default.fileExists(atPath: ca), "\(mode)")
        }
        let truth = ["generate", "--count", "2", "--out", dir.appendingPathComponent("r.ndjson").path]
        let (status, _, err) = try runTool(truth + ["--truth", dir.path, "--ca-dir", ca])
        #expect(status == 1 && err.contains("--truth '\(dir.path)': it is a folder"), "\(err)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("r.ndjson").path))
    }
}
