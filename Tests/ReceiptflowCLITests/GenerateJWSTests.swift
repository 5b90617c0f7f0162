import Foundation
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// `generate --jws`: JWS data of every input shape and bad kind, exported and compared row by row with its truth.
@Suite struct GenerateJWSTests {
    /// Epoch milliseconds as the CSV tables write timestamps (`2019-08-08T05:43:20.000Z`).
    static func csvTime(_ ms: Int64?) -> String {
        guard let ms else { return "" }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    /// A truth value as its CSV cell: null is empty, numbers and strings as text.
    static func cell(_ v: Any?) -> String {
        switch v {
        case nil, is NSNull: return ""
        case let s as String: return s
        case let n as NSNumber:
            if String(cString: n.objCType) == "c" { return n.boolValue ? "true" : "false" }
            return n.stringValue
        default: return "\(v!)"
        }
    }

    @Test func everyJWSRowOfAnExportMatchesTheTruthAndEveryBadKindGetsItsCode() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ca = dir.appendingPathComponent("ca").path
        let data = dir.appendingPathComponent("j.ndjson")
        let args = [
            "generate", "--jws", "--count", "240", "--seed", "7", "--bad-fraction", "0.3", "--ca-dir", ca, "--out",
            data.path,
        ]
        let (status, _, err) = try runTool(args)
        #expect(status == 0, "\(err)")
        #expect(err.contains("\(ca)/jws-root.pem"))
        let bytes = try Data(contentsOf: data)
        let truthURL = dir.appendingPathComponent("j.truth.ndjson")
        let truthBytes = try Data(contentsOf: truthURL)

        // The same seed and PKI give the same truth, and the same JWS but for their (randomized) signatures.
        #expect(try runTool(args + ["--quiet"]).0 == 0)
        let again = try Data(contentsOf: data)
        #expect(again != bytes)
        #expect(
            UnsignedJWSText.of(String(decoding: again, as: UTF8.self))
                == UnsignedJWSText.of(String(decoding: bytes, as: UTF8.self)))
        #expect(try Data(contentsOf: truthURL) == truthBytes)

        let truth = try JWSExportTests.objects(truthURL)
        let out = try JWSExportTests.export(
            [String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)],
            ["--format", "csv", "--trust-anchor", "\(ca)/jws-root.pem"], in: dir.appendingPathComponent("e"))
        let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
        let transactions = try JWSExportTests.csv(out.appendingPathComponent("transactions.csv"))
        try #require(receipts.count == truth.count)

        let strings = ["record_id": "id", "receipt_type": "receipt_type", "bundle_id": "bundle_id"]
        let ints = [
            "line": "line", "jws_index": "jws_index", "status": "status", "app_item_id": "app_item_id",
            "in_app_count": "in_app_count",
        ]
        var txByPosition: [String: [[String: String]]] = [:]
        for t in transactions { txByPosition["\(t["line"]!)/\(t["jws_index"]!)", default: []].append(t) }
        var expectedTransactions = 0
        for (row, t) in zip(receipts, truth) {
            let at = "line \(t["line"]!) jws_index \(t["jws_index"]!) (\(t["kind"]!))"
            for (column, key) in strings.merging(ints, uniquingKeysWith: { a, _ in a }) {
                #expect(row[column] == Self.cell(t[key]), "\(at): \(column)")
            }
            #expect(row["error_code"] == Self.cell(t["error_code"]), "\(at): \(row["error_detail"] ?? "")")
            #expect(row["record_kind"] == t["record_kind"] as? String, "\(at)")
            #expect(row["verified"] == (t["status"] as? Int == 0 ? "true" : "false"), "\(at)")
            for column in ["receipt_creation_date", "original_purchase_date"] {
                #expect(row[column] == Self.csvTime((t[column] as? NSNumber)?.int64Value), "\(at): \(column)")
            }
            // Each generated bad kind gets the code the factory names for it, independently of the truth file.
            if let kind = JWSFactory.Kind(rawValue: t["kind"] as! String) {
                #expect(row["error_code"] == (kind.expectedCode ?? ""), "\(at)")
            }
            let expected = t["status"] as? Int == 0 ? (t["transactions"] as? [[String: Any]] ?? []) : []
            let got = txByPosition["\(row["line"]!)/\(row["jws_index"]!)"] ?? []
            expectedTransactions += expected.count
            #expect(got.count == expected.count, "\(at): transactions")
            for (g, e) in zip(got, expected) {
                for key in [
                    "transaction_id", "original_transaction_id", "product_id", "quantity",
                    "web_order_line_item_id", "cancellation_reason",
                ] {
                    #expect(g[key] == Self.cell(e[key]), "\(at): \(key)")
                }
                for key in ["purchase_date", "original_purchase_date", "expires_date", "cancellation_date"] {
                    #expect(g[key] == Self.csvTime((e[key] as? NSNumber)?.int64Value), "\(at): \(key)")
                }
            }
        }
        #expect(transactions.count == expectedTransactions)
        #expect(expectedTransactions > 0)
        // Some transactions carry the app's account token, and some introductory offers name their discount.
        #expect(transactions.filter { $0["app_account_token"] != "" }.count > expectedTransactions / 5)
        #expect(transactions.contains { $0["offer_type"] == "1" && $0["offer_discount_type"] != "" })

        // Every kind, every shape and every record kind is in the data.
        let kinds = Set(truth.compactMap { $0["kind"] as? String })
        for kind in JWSFactory.Kind.allCases { #expect(kinds.contains(kind.rawValue), "no \(kind.rawValue)") }
        let shapes = Set(truth.compactMap { $0["shape"] as? String })
        #expect(shapes == Set(JWSRecordFactory.Shape.allCases.map(\.rawValue)))
        let recordKinds = Set(truth.compactMap { $0["record_kind"] as? String })
        #expect(recordKinds == ["jws", "jws_transaction", "jws_renewal", "jws_notification"])
    }

    @Test func aCompressedOutputHasACompressedTruthAndTheSameLinesAndAnyCADirTheSameKeysAndPayloads() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ca = dir.appendingPathComponent("ca").path
        for name in ["p.ndjson", "z.ndjson.zst"] {
            let (status, _, err) = try runTool([
                "generate", "--jws", "--count", "30", "--ca-dir", ca, "--quiet", "--out",
                dir.appendingPathComponent(name).path,
            ])
            #expect(status == 0, "\(err)")
        }
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("z.truth.ndjson.zst").path))
        // Another empty CA directory is filled with the same keys (certificate signatures are randomized, so the
        // certificates are other bytes): the same truth, and the same payloads (the headers carry the certificates).
        let ca2 = dir.appendingPathComponent("ca2")
        let (again, _, _) = try runTool([
            "generate", "--jws", "--count", "30", "--ca-dir", ca2.path, "--quiet", "--out",
            dir.appendingPathComponent("q.ndjson").path,
        ])
        #expect(again == 0)
        let keys = try FileManager.default.contentsOfDirectory(atPath: ca).filter { $0.hasSuffix(".key.der") }.sorted()
        #expect(keys.count >= 8)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: ca2.path).filter { $0.hasSuffix(".key.der") }.sorted()
                == keys)
        for name in keys {
            #expect(
                try Data(contentsOf: ca2.appendingPathComponent(name))
                    == Data(contentsOf: URL(fileURLWithPath: ca).appendingPathComponent(name)), "\(name)")
        }
        #expect(
            try Data(contentsOf: dir.appendingPathComponent("q.truth.ndjson"))
                == Data(contentsOf: dir.appendingPathComponent("p.truth.ndjson")))
        let unsigned = try ["p.ndjson", "q.ndjson"].map {
            UnsignedJWSText.of(
                try String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8), headers: false)
        }
        #expect(unsigned[0] == unsigned[1])
        #expect(unsigned[0].contains("JWS(-|{"))
        let plain = try String(contentsOf: dir.appendingPathComponent("p.ndjson"), encoding: .utf8)
        let compressed = try Data(contentsOf: dir.appendingPathComponent("z.ndjson.zst"))
        #expect(compressed.prefix(4) == Data([0x28, 0xB5, 0x2F, 0xFD]))
        // The same lines but for the signatures.
        let decompressed = try ResumeData.decompressedText(dir.appendingPathComponent("z.ndjson.zst").path)
        #expect(decompressed.split(separator: "\n").count == plain.split(separator: "\n").count)
        #expect(UnsignedJWSText.of(decompressed) == UnsignedJWSText.of(plain))
        let truth = try String(contentsOf: dir.appendingPathComponent("p.truth.ndjson"), encoding: .utf8)
        #expect(try ResumeData.decompressedText(dir.appendingPathComponent("z.truth.ndjson.zst").path) == truth)
    }

    @Test(arguments: [
        ["generate", "--jws", "--out", "x.ndjson"],
        ["generate", "--jws", "--count", "5", "--out", "x.ndjson", "--bad-fraction", "2"],
        ["generate", "--jws", "--count", "5", "--out", "x.ndjson", "--digest", "sha1"],
        ["generate", "--jws", "--count", "5", "--out", "x.ndjson", "--jws-fraction", "0.5"],
        ["generate", "--count", "5", "--out", "x.ndjson", "--jws-fraction", "0.5"],
        ["generate", "--customers", "5", "--out", "x.ndjson", "--jws"],
        ["generate", "--customers", "5", "--out", "x.ndjson", "--jws-fraction", "1.5"],
    ])
    func rejectsBadUsageWithStatus2(args: [String]) throws {
        #expect(try runTool(args).0 == 2)
    }
}

/// `scripts/check-truth.py` over an export of generated JWS data, through CSV and Parquet (pyarrow).
@Suite(.enabled(if: Python.pyarrowAvailable, "needs python3 with pyarrow"))
struct JWSTruthScriptTests {
    @Test(arguments: ["csv", "parquet"]) func theScriptFindsNoMismatch(format: String) throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ca = dir.appendingPathComponent("ca").path
        let input = dir.appendingPathComponent("j.ndjson.zst").path
        let (g, _, gErr) = try runTool([
            "generate", "--jws", "--count", "120", "--seed", "5", "--bad-fraction", "0.3", "--ca-dir", ca, "--out",
            input, "--quiet",
        ])
        try #require(g == 0, "\(gErr)")
        let out = dir.appendingPathComponent("out").path
        let (e, _, eErr) = try runTool([
            "export", input, "--format", format, "--out", out, "--quiet", "--trust-anchor", "\(ca)/jws-root.pem",
        ])
        try #require(e == 0, "\(eErr)")
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = [
            "python3", Fixtures.packageRoot.appendingPathComponent("scripts/check-truth.py").path, out,
            dir.appendingPathComponent("j.truth.ndjson.zst").path, "--format", format,
        ]
        let pipe = Pipe()
        check.standardOutput = pipe
        try check.run()
        let report = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        #expect(check.terminationStatus == 0, "\(report)")
        #expect(report.contains(", 0 mismatches"), "\(report)")
    }
}
