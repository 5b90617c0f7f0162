import Foundation
import ReceiptTestSupport
import Testing

/// `export --user-field NAME` over a generated corpus of receipts and JWS (`generate --customers --jws-fraction`):
/// `receipts.user_id` holds each record's field, the history's user columns are the same whatever the thread
/// count and spill budget, and without the option every user column is null. A JWS occurrence keeps the offer a
/// receipt stated for the same purchase.
@Suite struct UserFieldExportTests {
    /// The generated corpus (its directory, data file and CA folder).
    static func corpus(_ dir: URL) throws -> (data: String, ca: String) {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ca = dir.appendingPathComponent("ca").path
        let data = dir.appendingPathComponent("m.ndjson").path
        let (status, _, err) = try runTool([
            "generate", "--customers", "150", "--seed", "5", "--jws-fraction", "0.5", "--ca-dir", ca, "--out", data,
            "--quiet",
        ])
        #expect(status == 0, "\(err)")
        return (data, ca)
    }

    static func export(
        _ c: (data: String, ca: String), _ out: URL, _ extra: [String], environment: [String: String] = [:]
    ) throws {
        let (status, _, err) = try runTool(
            [
                "export", c.data, "--format", "csv", "--out", out.path, "--quiet", "--trust-anchor", "\(c.ca)/root.pem",
                "--trust-anchor", "\(c.ca)/jws-root.pem",
            ] + extra, environment: environment)
        #expect(status == 0, "\(err)")
    }

    @Test func receiptsCarryEachRecordsUserIDAndTheHistoryDoesNotDependOnThreadsOrSpills() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = try Self.corpus(dir)
        let out = dir.appendingPathComponent("out")
        try Self.export(c, out, ["--user-field", "user_id"])

        // Each line's user_id as the input states it: a string, a number's text, or none (absent or null).
        var want: [String: String] = [:]
        let text = try String(contentsOfFile: c.data, encoding: .utf8)
        for (i, line) in text.split(separator: "\n").enumerated() {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            switch object["user_id"] {
            case let s as String: want["\(i + 1)"] = s
            case let n as NSNumber: want["\(i + 1)"] = n.stringValue
            default: want["\(i + 1)"] = ""
            }
        }
        let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.count > want.count)
        for r in receipts { #expect(r["user_id"] == want[r["line"]!], "line \(r["line"]!)") }
        #expect(Set(want.values).count > 100)
        #expect(want.values.contains(""))
        #expect(want.values.contains { $0.first?.isNumber == true })

        let purchases = try JWSExportTests.csv(out.appendingPathComponent("purchases.csv"))
        #expect(purchases.contains { $0["multiple_user_ids"] == "true" })
        #expect(purchases.contains { $0["app_account_token"] != "" })
        let subscriptions = try JWSExportTests.csv(out.appendingPathComponent("subscriptions.csv"))
        #expect(subscriptions.contains { $0["multiple_user_ids"] == "true" })
        #expect(subscriptions.contains { $0["app_account_token"] != "" })

        let tables = ["purchases.csv", "subscriptions.csv"]
        let reference = try tables.map { try Data(contentsOf: out.appendingPathComponent($0)) }
        for (name, extra, env) in [
            ("one", ["--threads", "1"], [:]), ("three", ["--threads", "3"], [:]),
            ("spill", ["--threads", "2"], ["RECEIPTFLOW_HISTORY_MEMORY": "65536"]),
            ("parts", ["--part-records", "97"], ["RECEIPTFLOW_HISTORY_MEMORY": "65536"]),
        ] as [(String, [String], [String: String])] {
            let other = dir.appendingPathComponent(name)
            try Self.export(c, other, ["--user-field", "user_id"] + extra, environment: env)
            for (table, want) in zip(tables, reference) {
                #expect(try Data(contentsOf: other.appendingPathComponent(table)) == want, "\(name): \(table)")
            }
        }
    }

    @Test func withoutTheOptionTheUserColumnsArePresentAndNull() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = try Self.corpus(dir)
        let out = dir.appendingPathComponent("out")
        try Self.export(c, out, [])
        let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.allSatisfy { $0["user_id"] == "" })
        for table in ["purchases.csv", "subscriptions.csv"] {
            let rows = try JWSExportTests.csv(out.appendingPathComponent(table))
            #expect(rows.count > 10)
            #expect(rows.allSatisfy { $0["user_id"] == "" && $0["multiple_user_ids"] == "" }, "\(table)")
            // The app account token needs no option.
            #expect(rows.contains { $0["app_account_token"] != "" }, "\(table)")
        }
    }

    /// A trial stated by a receipt stays a trial when the purchase's newest occurrence is a JWS (whose
    /// `offerDiscountType` is `FREE_TRIAL`).
    @Test func aTrialSeenInAReceiptAndLaterInAJWSStaysATrial() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = try Self.corpus(dir)
        let out = dir.appendingPathComponent("out")
        try Self.export(c, out, ["--user-field", "user_id"])
        let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
        var valid: Set<String> = []
        for r in receipts where r["status"] == "0" { valid.insert("\(r["line"]!)/\(r["jws_index"]!)") }
        var receiptTrials: Set<String> = []
        var jwsTrials: Set<String> = []
        for t in try JWSExportTests.csv(out.appendingPathComponent("transactions.csv"))
        where valid.contains("\(t["line"]!)/\(t["jws_index"]!)") && t["receipt_type"] != "Xcode" {
            let environment = t["receipt_type"]!.hasSuffix("Sandbox") ? "Sandbox" : "Production"
            let key = "\(environment)|\(t["bundle_id"]!)|\(t["transaction_id"]!)"
            if t["jws_index"] == "" {
                if t["is_trial_period"] == "true" { receiptTrials.insert(key) }
            } else if t["offer_type"] == "1" && t["offer_discount_type"] == "FREE_TRIAL" {
                jwsTrials.insert(key)
            }
        }
        let lines = Set(receipts.filter { $0["jws_index"] != "" }.map { $0["line"]! })
        var newestInJWS = 0
        for p in try JWSExportTests.csv(out.appendingPathComponent("purchases.csv")) {
            let key = "\(p["environment"]!)|\(p["bundle_id"]!)|\(p["transaction_id"]!)"
            guard receiptTrials.contains(key) && jwsTrials.contains(key) else { continue }
            #expect(p["is_trial_period"] == "true", "\(key)")
            #expect(p["is_in_intro_offer_period"] == "false", "\(key)")
            if lines.contains(p["line"]!) { newestInJWS += 1 }
        }
        #expect(newestInJWS > 3, "\(newestInJWS) trials whose newest occurrence is a JWS")
    }
}

/// The user id's text whatever JSON form the field takes, in the `receipts` table and the NDJSON objects.
@Suite struct UserFieldFormsTests {
    @Test func theUserIDIsTheFieldsTextWhateverItsJSONForm() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ca = dir.appendingPathComponent("ca").path
        let data = dir.appendingPathComponent("c.ndjson").path
        #expect(try runTool(["generate", "--customers", "12", "--seed", "2", "--ca-dir", ca, "--out", data]).0 == 0)
        // Each line's object without its user_id member, then the member in one of these forms.
        let forms: [(String, String?)] = [
            (#","user_id":"u\u00e9\"q""#, "ué\"q"), (#","user_id":true"#, "true"), (#","user_id":12.50"#, "12.50"),
            (#","user_id":-7"#, "-7"), (#","user_id":{"id":1}"#, nil), (#","user_id":[1]"#, nil),
            (#","user_id":null"#, nil), ("", nil), (#","user_id":"a","user_id":"b""#, "b"), (#","user_id":"""#, ""),
        ]
        let lines = try String(contentsOfFile: data, encoding: .utf8).split(separator: "\n").map(String.init)
        var rewritten: [String] = []
        for (i, line) in lines.enumerated() {
            let object = try #require(line.range(of: #"","receipt-data":""#)).upperBound
            let end = try #require(line[object...].firstIndex(of: "\""))
            rewritten.append(String(line[..<line.index(after: end)]) + forms[i % forms.count].0 + "}")
        }
        let input = dir.appendingPathComponent("forms.ndjson")
        try Data((rewritten.joined(separator: "\n") + "\n").utf8).write(to: input)
        for format in ["csv", "ndjson"] {
            let out = dir.appendingPathComponent(format)
            let (status, _, err) = try runTool([
                "export", input.path, "--format", format, "--out", out.path, "--quiet", "--user-field", "user_id",
                "--trust-anchor", "\(ca)/root.pem",
            ])
            #expect(status == 0, "\(err)")
            if format == "csv" {
                let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
                #expect(receipts.count == lines.count)
                for r in receipts {
                    // A string cell a spreadsheet would run as a formula gets its apostrophe (contract.md, Formats).
                    let want = forms[(Int(r["line"]!)! - 1) % forms.count].1.map { $0.hasPrefix("-") ? "'" + $0 : $0 }
                    #expect(r["user_id"] == (want ?? ""), "line \(r["line"]!)")
                }
            } else {
                let text = try String(contentsOf: out.appendingPathComponent("receipts.ndjson"), encoding: .utf8)
                for (i, line) in text.split(separator: "\n").enumerated() {
                    let object = try #require(
                        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    let want = forms[i % forms.count].1
                    if let want {
                        #expect(object["user_id"] as? String == want, "line \(i + 1)")
                    } else {
                        #expect(object["user_id"] is NSNull, "line \(i + 1)")
                    }
                }
            }
        }
    }
}
