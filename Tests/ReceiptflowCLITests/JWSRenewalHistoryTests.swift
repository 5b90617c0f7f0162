import Foundation
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// `export` of JWS transactions and renewal infos signed by the test PKI: the newest renewal info of a
/// subscription refines its `subscriptions` row (docs/history.md, "Renewal infos (JWS)"), the same through CSV and
/// Parquet.
struct JWSRenewalHistoryTests {
    static let day: Int64 = 86_400_000
    /// 2024-03-01T00:00:00Z.
    static let t0: Int64 = 1_709_251_200_000
    static let bundle = "com.example.app"
    static let asOf = t0 + 65 * day

    let factory: JWSFactory

    init() throws { factory = JWSFactory(pki: try JWSTestPKI.load(directory: nil)) }

    /// A signed transaction of subscription `original`: a 30-day period from day `start`.
    func transaction(_ id: String, _ original: String, start: Int64, environment: String = "Production") -> String {
        factory.sign([
            "transactionId": id, "originalTransactionId": original, "bundleId": Self.bundle,
            "productId": "com.example.app.monthly", "type": "Auto-Renewable Subscription", "quantity": 1,
            "purchaseDate": Self.t0 + start * Self.day, "expiresDate": Self.t0 + (start + 30) * Self.day,
            "signedDate": Self.t0 + start * Self.day + 60_000, "environment": environment,
        ])
    }

    /// A signed renewal info of subscription `original`, signed on day `signed`.
    func renewal(_ original: String, signed: Int64, environment: String = "Production", _ fields: [String: Any])
        -> String
    {
        var payload: [String: Any] = [
            "originalTransactionId": original, "productId": "com.example.app.monthly",
            "autoRenewProductId": "com.example.app.monthly", "autoRenewStatus": 1,
            "signedDate": Self.t0 + signed * Self.day, "environment": environment,
        ]
        payload.merge(fields) { _, new in new }
        return factory.sign(payload)
    }

    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The input: four subscriptions, their transactions and renewal infos in the JWS forms `export` reads.
    func lines() throws -> [String] {
        let retry = renewal(
            "1000", signed: 61, ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": Self.t0 + 76 * Self.day])
        let notification = factory.sign([
            "notificationType": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD", "signedDate": Self.t0 + 61 * Self.day,
            "data": [
                "bundleId": Self.bundle, "environment": "Production",
                "signedTransactionInfo": transaction("1001", "1000", start: 30), "signedRenewalInfo": retry,
            ],
        ])
        let statuses: [String: Any] = [
            "bundleId": Self.bundle, "environment": "Sandbox",
            "data": [
                [
                    "lastTransactions": [
                        [
                            "signedTransactionInfo": transaction("4000", "4000", start: 10, environment: "Sandbox"),
                            "signedRenewalInfo": renewal(
                                "4000", signed: 50, environment: "Sandbox", ["isInBillingRetryPeriod": true]),
                        ]
                    ]
                ]
            ],
        ]
        return [
            // 1000: two periods (days 0-60), then billing retry in the grace period until day 76.
            try Self.json(["id": "t1000", "receipt": transaction("1000", "1000", start: 0)]),
            try Self.json(["signedPayload": notification]),
            // An older renewal info of 1000 that says nothing: the notification's is newer.
            try Self.json(["id": "r1000-old", "receipt": renewal("1000", signed: 20, [:])]),
            // 2000: running at the as-of time with auto-renew off.
            try Self.json(["id": "t2000", "receipt": transaction("2000", "2000", start: 40)]),
            try Self.json(["id": "r2000", "receipt": renewal("2000", signed: 45, ["autoRenewStatus": 0])]),
            // 3000: expired on day 30, as a renewal info of day 35 says.
            try Self.json(["id": "t3000", "receipt": transaction("3000", "3000", start: 0)]),
            try Self.json([
                "id": "r3000", "receipt": renewal("3000", signed: 35, ["autoRenewStatus": 0, "expirationIntent": 1]),
            ]),
            // 4000 (Sandbox): billing retry; a Production renewal info of 4000 matches no row.
            try Self.json(statuses),
            try Self.json([
                "id": "r4000-prod", "receipt": renewal("4000", signed: 50, ["isInBillingRetryPeriod": true]),
            ]),
        ]
    }

    /// Writes the input and the test PKI's root beside it; returns (input, root).
    func prepare(_ dir: URL) throws -> (String, String) {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("in.ndjson")
        try Data((try lines().joined(separator: "\n") + "\n").utf8).write(to: input)
        let root = dir.appendingPathComponent("root.pem")
        try Data(factory.pki.root.pem.utf8).write(to: root)
        return (input.path, root.path)
    }

    func export(_ input: String, _ root: String, format: String, to out: URL, _ extra: [String] = []) throws {
        let (status, _, err) = try runTool(
            [
                "export", input, "--out", out.path, "--format", format, "--trust-anchor", root, "--as-of",
                "2024-05-05T00:00:00Z", "--quiet",
            ] + extra)
        try #require(status == 0, "\(err)")
    }

    static func iso(_ ms: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    @Test func theNewestRenewalInfoRefinesEachSubscriptionThroughCSV() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jws-renewals-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, root) = try prepare(dir)
        let out = dir.appendingPathComponent("csv")
        try export(input, root, format: "csv", to: out)
        // Every JWS verified: the rows below come from signed data.
        let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.count == 12)
        #expect(receipts.allSatisfy { $0["status"] == "0" && $0["verified"] == "true" })
        #expect(try JWSExportTests.csv(out.appendingPathComponent("renewals.csv")).count == 6)

        let rows = try JWSExportTests.csv(out.appendingPathComponent("subscriptions.csv"))
        #expect(
            rows.map { "\($0["environment"]!)/\($0["original_transaction_id"]!)" } == [
                "Production/1000", "Production/2000", "Production/3000", "Sandbox/4000",
            ])
        let by = Dictionary(uniqueKeysWithValues: rows.map { ($0["original_transaction_id"]!, $0) })
        #expect(by["1000"]?["state"] == "grace_period")
        #expect(by["1000"]?["periods"] == "2")
        #expect(by["1000"]?["renewal_signed_date"] == Self.iso(Self.t0 + 61 * Self.day))
        #expect(by["1000"]?["is_in_billing_retry_period"] == "true")
        #expect(by["1000"]?["grace_period_expires_date"] == Self.iso(Self.t0 + 76 * Self.day))
        #expect(by["2000"]?["state"] == "active")
        #expect(by["2000"]?["auto_renew_status"] == "0")
        #expect(by["3000"]?["state"] == "expired")
        #expect(by["3000"]?["expiration_intent"] == "1")
        #expect(by["3000"]?["auto_renew_product_id"] == "com.example.app.monthly")
        #expect(by["4000"]?["state"] == "billing_retry")
        #expect(by["4000"]?["grace_period_expires_date"] == "")
        #expect(by["4000"]?["renewal_signed_date"] == Self.iso(Self.t0 + 50 * Self.day))
    }

    /// A run in parts seals the renewal infos with each part (the spill of every part taken in at the end) and
    /// writes the same subscriptions table as a plain run.
    @Test func aRunInPartsGivesTheSameSubscriptions() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jws-renewals-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, root) = try prepare(dir)
        try export(input, root, format: "csv", to: dir.appendingPathComponent("plain"))
        let parts = dir.appendingPathComponent("parts")
        try export(input, root, format: "csv", to: parts, ["--part-records", "2"])
        let manifest = try String(contentsOf: parts.appendingPathComponent("manifest.json"), encoding: .utf8)
        #expect(manifest.contains("part-00003"))
        let plain = try Data(contentsOf: dir.appendingPathComponent("plain/subscriptions.csv"))
        let inParts = try Data(contentsOf: parts.appendingPathComponent("subscriptions.csv"))
        #expect(inParts == plain)
        #expect(String(decoding: plain, as: UTF8.self).contains("grace_period"))
    }

    @Test func ndjsonCarriesTheRenewalColumnsAsKeys() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jws-renewals-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, root) = try prepare(dir)
        let out = dir.appendingPathComponent("ndjson")
        try export(input, root, format: "ndjson", to: out)
        let rows = try JWSExportTests.objects(out.appendingPathComponent("subscriptions.ndjson"))
        #expect(rows.map { $0["state"] as? String } == ["grace_period", "active", "expired", "billing_retry"])
        #expect(rows.map { $0["auto_renew_status"] as? Int } == [1, 0, 0, 1])
        #expect(rows[0]["grace_period_expires_date"] as? String == Self.iso(Self.t0 + 76 * Self.day))
        #expect(rows[1]["is_in_billing_retry_period"] is NSNull)
    }

    static let python3Available: Bool = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "pass"]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    /// The Python reference of the history rules (Tests/python/history_reference.py), written apart from the Swift
    /// code, gives the same purchases and subscriptions from the export's receipts, transactions and renewals.
    @Test(.enabled(if: python3Available, "needs python3"))
    func thePythonReferenceAgrees() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jws-renewals-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, root) = try prepare(dir)
        let out = dir.appendingPathComponent("csv")
        try export(input, root, format: "csv", to: out)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [
            "python3", Fixtures.packageRoot.appendingPathComponent("Tests/python/history_reference.py").path,
            out.path, input, "--as-of", "2024-05-05T00:00:00Z",
        ]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0)
        func lines(_ name: String) throws -> [String] {
            try String(contentsOf: out.appendingPathComponent(name), encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false
            ).map(String.init).filter { !$0.isEmpty }
        }
        let reference = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        let exported = try lines("purchases.csv") + [""] + lines("subscriptions.csv") + [""]
        #expect(reference == exported)
        #expect(
            try lines("subscriptions.csv").first?.hasSuffix(
                "grace_period_expires_date,user_id,multiple_user_ids,app_account_token") == true)
    }

    @Test(.enabled(if: Python.pyarrowAvailable, "needs python3 with pyarrow"))
    func parquetHoldsTheSameSubscriptionsRowsAsCSV() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jws-renewals-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, root) = try prepare(dir)
        try export(input, root, format: "csv", to: dir.appendingPathComponent("csv"))
        try export(input, root, format: "parquet", to: dir.appendingPathComponent("parquet"))
        let csv = try JWSExportTests.csv(dir.appendingPathComponent("csv/subscriptions.csv"))

        // pyarrow reads the Parquet table; timestamps as epoch milliseconds, nulls as "".
        let script = """
            import json, sys, pyarrow as pa, pyarrow.parquet as pq
            t = pq.read_table(sys.argv[1])
            t = pa.table({n: c.cast(pa.int64()) if pa.types.is_timestamp(c.type) else c
                          for n, c in zip(t.column_names, t.columns)})
            def text(v):
                if v is None: return ""
                if isinstance(v, bool): return "true" if v else "false"
                if isinstance(v, int): return v
                return str(v)
            print(json.dumps({"columns": t.column_names,
                              "rows": [{k: text(v) for k, v in r.items()} for r in t.to_pylist()]}))
            """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", script, dir.appendingPathComponent("parquet/subscriptions.parquet").path]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0)
        let parsed = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let columns = try #require(parsed["columns"] as? [String])
        #expect(
            columns.suffix(10) == [
                "state", "renewal_signed_date", "auto_renew_status", "auto_renew_product_id", "expiration_intent",
                "is_in_billing_retry_period", "grace_period_expires_date", "user_id", "multiple_user_ids",
                "app_account_token",
            ])
        let rows = try #require(parsed["rows"] as? [[String: Any]])
        #expect(rows.count == csv.count)
        let timestamps: Set = [
            "first_purchase_date", "latest_purchase_date", "latest_expires_date", "observed_through",
            "renewal_signed_date", "grace_period_expires_date",
        ]
        for (row, want) in zip(rows, csv) {
            for name in columns {
                let got: String
                if timestamps.contains(name), let ms = row[name] as? Int {
                    got = Self.iso(Int64(ms))
                } else if let n = row[name] as? Int {
                    got = String(n)
                } else {
                    got = "\(row[name] ?? "?")"
                }
                #expect(got == want[name], "\(name) of \(want["original_transaction_id"] ?? "?")")
            }
        }
        #expect(rows.map { "\($0["state"] ?? "")" } == ["grace_period", "active", "expired", "billing_retry"])
    }
}
