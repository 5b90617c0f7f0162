import Foundation
import ReceiptTestSupport
import Testing

/// `generate --customers N --jws-fraction F`: the same customers' purchases in receipts and in JWS; the export's
/// history tables equal the expected ones byte for byte and hold each purchase once.
@Suite struct GenerateMixedCustomersTests {
    @Test func theExportsHistoryTablesEqualTheExpectedOnesWithEachPurchaseOnce() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ca = dir.appendingPathComponent("ca").path
        let data = dir.appendingPathComponent("m.ndjson").path
        let args = [
            "generate", "--customers", "120", "--seed", "3", "--jws-fraction", "0.5", "--ca-dir", ca, "--out", data,
        ]
        let (status, _, err) = try runTool(args)
        #expect(status == 0, "\(err)")
        #expect(err.contains("\(ca)/jws-root.pem"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: data))
        let names = ["m.purchases.csv", "m.subscriptions.csv", "m.events.csv", "m.daily.csv", "m.history.json"]
        let expected = try names.map {
            try Data(contentsOf: dir.appendingPathComponent($0))
        }
        #expect(try runTool(args + ["--quiet"]).0 == 0)
        // The same lines but for the JWS signatures, which are randomized.
        let again = try Data(contentsOf: URL(fileURLWithPath: data))
        #expect(again != bytes)
        #expect(
            UnsignedJWSText.of(String(decoding: again, as: UTF8.self))
                == UnsignedJWSText.of(String(decoding: bytes, as: UTF8.self)))
        // The expected tables do not depend on signatures.
        for (name, want) in zip(names, expected) {
            #expect(try Data(contentsOf: dir.appendingPathComponent(name)) == want, "\(name)")
        }

        let out = dir.appendingPathComponent("out")
        let export = try runTool([
            "export", data, "--format", "csv", "--out", out.path, "--quiet", "--trust-anchor", "\(ca)/root.pem",
            "--trust-anchor", "\(ca)/jws-root.pem",
        ])
        #expect(export.0 == 0, "\(export.2)")
        for table in ["purchases", "subscriptions", "events", "daily"] {
            let got = try Data(contentsOf: out.appendingPathComponent("\(table).csv"))
            let want = try Data(contentsOf: dir.appendingPathComponent("m.\(table).csv"))
            #expect(got == want, "\(table).csv differs from the expected table")
        }

        // Each purchase once, and many of them seen in both generations.
        let purchases = try JWSExportTests.csv(out.appendingPathComponent("purchases.csv"))
        let keys = purchases.map { "\($0["environment"]!)|\($0["bundle_id"]!)|\($0["transaction_id"]!)" }
        #expect(Set(keys).count == keys.count)
        #expect(keys.count > 100)
        let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
        var valid: Set<String> = []
        for r in receipts where r["status"] == "0" { valid.insert("\(r["line"]!)/\(r["jws_index"]!)") }
        var byGeneration: [Bool: Set<String>] = [:]
        for t in try JWSExportTests.csv(out.appendingPathComponent("transactions.csv"))
        where valid.contains("\(t["line"]!)/\(t["jws_index"]!)") && t["receipt_type"] != "Xcode" {
            let environment = t["receipt_type"]!.hasSuffix("Sandbox") ? "Sandbox" : "Production"
            let key = "\(environment)|\(t["bundle_id"]!)|\(t["transaction_id"]!)"
            byGeneration[t["jws_index"]! != "", default: []].insert(key)
        }
        let inBoth = (byGeneration[true] ?? []).intersection(byGeneration[false] ?? [])
        #expect(inBoth.count > 20, "\(inBoth.count) purchases in both receipts and JWS")
        #expect((byGeneration[true] ?? []).union(byGeneration[false] ?? []) == Set(keys))
        let kinds = Set(receipts.compactMap { $0["record_kind"] })
        #expect(kinds == ["receipt", "jws_transaction", "jws_notification"])
    }

    @Test func withoutTheFlagTheCorpusIsTheReceiptsOnlyOneAndAZeroFractionChangesNothing() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ca = dir.appendingPathComponent("ca").path
        var outputs: [[Data]] = []
        for extra in [[], ["--jws-fraction", "0"]] {
            let run = dir.appendingPathComponent(UUID().uuidString)
            try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
            let data = run.appendingPathComponent("c.ndjson").path
            let (status, _, err) = try runTool(
                [
                    "generate", "--customers", "40", "--seed", "9", "--ca-dir", ca, "--out", data, "--quiet",
                    "--expected-source", "c.ndjson",
                ] + extra)
            #expect(status == 0, "\(err)")
            outputs.append(
                try ["c.ndjson", "c.purchases.csv", "c.subscriptions.csv", "c.history.json"].map {
                    try Data(contentsOf: run.appendingPathComponent($0))
                })
        }
        #expect(outputs[0] == outputs[1])
        let text = String(decoding: outputs[0][0], as: UTF8.self)
        let holdsJWS = text.contains("\"receipt-data\":\"eyJ") || text.contains("\"signed")
        #expect(!holdsJWS)
    }
}
