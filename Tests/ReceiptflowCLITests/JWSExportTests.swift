import Foundation
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// `export` and `inspect` of JWS records (docs/jws.md): the real Apple-signed samples, the test PKI's bad kinds,
/// the policies, and a mixed input of receipts and JWS.
struct JWSExportTests {
    static let jwsDir = Fixtures.jwsDir
    static let appleG3 = Fixtures.certsDir.appendingPathComponent("AppleRootCA-G3.cer").path

    /// The samples by name, sorted: (name, compact JWS, expected.json).
    static func samples() throws -> [(name: String, jws: String, expected: [String: Any])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: jwsDir.path).filter { $0.hasSuffix(".jws") }
            .sorted()
        return try names.map { file in
            let name = String(file.dropLast(4))
            let jws = try String(contentsOf: jwsDir.appendingPathComponent(file), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let data = try Data(contentsOf: jwsDir.appendingPathComponent(name + ".expected.json"))
            let expected = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return (name, jws, expected)
        }
    }

    /// One NDJSON record per sample: a notification as its body, any other JWS in the record field.
    static func line(_ name: String, _ jws: String) throws -> String {
        let object: [String: Any] =
            name.hasPrefix("notification") ? ["id": name, "signedPayload": jws] : ["id": name, "receipt": jws]
        return String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func tempDir() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("jws-export-\(UUID().uuidString)")
    }

    /// Runs `export` over `lines` and returns the output directory (exit status checked to be 0).
    static func export(_ lines: [String], _ options: [String], in dir: URL) throws -> URL {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("in.ndjson")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: input)
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(["export", input.path, "--out", out.path, "--quiet"] + options)
        #expect(status == 0, "\(err)")
        return out
    }

    /// The objects of an NDJSON file.
    static func objects(_ url: URL) throws -> [[String: Any]] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// Rows of a CSV file as column name to field text (quoted fields unquoted; "" for an empty field).
    static func csv(_ url: URL) throws -> [[String: String]] {
        let text = try String(contentsOf: url, encoding: .utf8)
        var records: [[String]] = []
        var field = ""
        var record: [String] = []
        var quoted = false
        var chars = text.makeIterator()
        var pending: Character? = nil
        while let c = pending ?? chars.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    let n = chars.next()
                    if n == "\"" {
                        field.append("\"")
                    } else {
                        quoted = false
                        pending = n
                    }
                } else {
                    field.append(c)
                }
                continue
            }
            switch c {
            case "\"": quoted = true
            case ",":
                record.append(field)
                field = ""
            case "\n", "\r\n":
                record.append(field)
                records.append(record)
                record = []
                field = ""
            default: field.append(c)
            }
        }
        let header = try #require(records.first)
        return records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
    }

    @Test func theRealSamplesVerifyAndDecodeToTheirPayloads() throws {
        let samples = try Self.samples()
        #expect(samples.count == 8)
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Self.export(
            try samples.map { try Self.line($0.name, $0.jws) }, ["--format", "ndjson", "--trust-anchor", Self.appleG3],
            in: dir)
        let rows = try Self.objects(out.appendingPathComponent("receipts.ndjson"))
        var at = 0
        for (i, sample) in samples.enumerated() {
            let nested = sample.expected["nested"] as? [String: Any] ?? [:]
            // The sample itself, then the JWS nested in it, each at the next index of the line.
            let expectedRows = 1 + nested.count
            let mine = rows.filter { ($0["line"] as? Int) == i + 1 }
            #expect(mine.count == expectedRows, "\(sample.name)")
            #expect(mine.map { $0["jws_index"] as? Int } == Array(0..<expectedRows), "\(sample.name)")
            for row in mine {
                #expect(row["status"] as? Int == 0, "\(sample.name): \(row["error_detail"] ?? "")")
                #expect(row["verified"] as? Bool == true)
                #expect(row["record_id"] as? String == sample.name)
            }
            let payload = try #require(mine.first?["payload"] as? NSDictionary)
            #expect(payload == (sample.expected["payload"] as? NSDictionary), "\(sample.name)")
            at += expectedRows
        }
        #expect(rows.count == at)
    }

    @Test func theRealSamplesVerifyWithTheBuiltInAnchors() throws {
        let samples = try Self.samples()
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Self.export(try samples.map { try Self.line($0.name, $0.jws) }, ["--format", "csv"], in: dir)
        let receipts = try Self.csv(out.appendingPathComponent("receipts.csv"))
        let nested = samples.map { ($0.expected["nested"] as? [String: Any])?.count ?? 0 }.reduce(0, +)
        #expect(receipts.count == samples.count + nested)
        #expect(receipts.allSatisfy { $0["status"] == "0" && $0["verified"] == "true" })
    }

    @Test func aBareJWSLineAndOneInsideWhitespaceAreRead() throws {
        let sample = try #require(try Self.samples().first { $0.name == "transaction_sandbox_2024_lovepush" })
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // One JWS per line, as a file of base64 receipts holds them.
        let bare = dir.appendingPathComponent("bare.txt")
        try Data((sample.jws + "\n" + sample.jws + "\n").utf8).write(to: bare)
        let spaced = dir.appendingPathComponent("spaced.ndjson")
        try Data(#"{"id":"spaced","receipt":"  \#(sample.jws)  "}"#.utf8 + [0x0A]).write(to: spaced)
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(
            ["export", bare.path, spaced.path, "--out", out.path, "--format", "csv", "--quiet"])
        #expect(status == 0, "\(err)")
        let receipts = try Self.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.map { $0["record_kind"] } == ["jws_transaction", "jws_transaction", "jws_transaction"])
        #expect(receipts.allSatisfy { $0["status"] == "0" && $0["verified"] == "true" })
        #expect(try Self.csv(out.appendingPathComponent("transactions.csv")).count == 3)
    }

    @Test func eachLineIsReadByItsOwnFormWhateverTheFirstLineIs() throws {
        let sample = try #require(try Self.samples().first { $0.name == "transaction_sandbox_2024_lovepush" })
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let object = #"{"id":"in-json","receipt":"\#(sample.jws)"}"#
        // The first line makes the first file NDJSON and the second a file of bare lines; the other form follows.
        let jsonFirst = dir.appendingPathComponent("json-first.ndjson")
        try Data((object + "\n" + sample.jws + "\n" + "{not json\n").utf8).write(to: jsonFirst)
        let bareFirst = dir.appendingPathComponent("bare-first.txt")
        try Data((sample.jws + "\n" + object + "\n" + "{not json\n").utf8).write(to: bareFirst)
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(
            ["export", jsonFirst.path, bareFirst.path, "--out", out.path, "--format", "csv", "--quiet"])
        #expect(status == 0, "\(err)")
        let receipts = try Self.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.map { $0["line"] } == ["1", "2", "3", "1", "2", "3"])
        #expect(receipts.map { $0["error_code"] } == ["", "", "invalid_json", "", "", "invalid_json"])
        #expect(
            receipts.map { $0["record_kind"] } == [
                "jws_transaction", "jws_transaction", "receipt", "jws_transaction", "jws_transaction", "receipt",
            ])
        #expect(receipts.map { $0["record_id"] } == ["in-json", "", "", "", "in-json", ""])
    }

    @Test func aNotificationYieldsThreeReceiptsRowsAndItsTransaction() throws {
        let sample = try #require(try Self.samples().first { $0.name == "notification_refund_sandbox_2025_session" })
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Self.export(
            [try Self.line(sample.name, sample.jws)], ["--format", "csv", "--trust-anchor", Self.appleG3], in: dir)
        let receipts = try Self.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.map { $0["record_kind"] } == ["jws_notification", "jws_transaction", "jws_renewal"])
        #expect(receipts.map { $0["jws_index"] } == ["0", "1", "2"])
        #expect(receipts.allSatisfy { $0["line"] == "1" && $0["status"] == "0" && $0["receipt_type"] == "Sandbox" })
        let transactions = try Self.csv(out.appendingPathComponent("transactions.csv"))
        #expect(transactions.count == 1)
        let t = try #require(transactions.first)
        let nested = try #require(sample.expected["nested"] as? [String: Any])
        let info = try #require(
            (nested["signedTransactionInfo"] as? [String: Any])?["payload"] as? [String: Any])
        #expect(t["transaction_id"] == info["transactionId"] as? String)
        #expect(t["original_transaction_id"] == info["originalTransactionId"] as? String)
        #expect(t["price"] == (info["price"] as? NSNumber)?.stringValue)
        #expect(t["currency"] == info["currency"] as? String)
        #expect(t["jws_index"] == "1")
        // A refund: the revocation is the cancellation, in both the receipt-era and the JWS columns.
        #expect(t["revocation_date"] == "2025-10-16T05:19:59.000Z")
        #expect(t["cancellation_date"] == t["revocation_date"])
        #expect(t["revocation_reason"] == "0")
    }

    @Test func aTamperedSampleIsABadSignature() throws {
        let sample = try #require(try Self.samples().first { $0.name == "transaction_sandbox_2024_lovepush" })
        var parts = sample.jws.split(separator: ".").map(String.init)
        // One character of the signature changed (a base64url letter swapped for another).
        var sig = Array(parts[2])
        sig[sig.count / 2] = sig[sig.count / 2] == "A" ? "B" : "A"
        parts[2] = String(sig)
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Self.export(
            [try Self.line(sample.name, parts.joined(separator: "."))],
            ["--format", "csv", "--trust-anchor", Self.appleG3], in: dir)
        let receipts = try Self.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.map { $0["error_code"] } == ["bad_signature"])
        #expect(receipts.first?["verified"] == "false")
        #expect(try Self.csv(out.appendingPathComponent("transactions.csv")).isEmpty)
    }

    @Test func everyGeneratedBadKindGetsItsCodeThroughExport() throws {
        let pki = try JWSTestPKI.load(directory: nil)
        let factory = JWSFactory(pki: pki)
        let payload: [String: Any] = [
            "transactionId": "2000000123456789", "originalTransactionId": "2000000123456789",
            "bundleId": "com.example.app", "productId": "com.example.app.monthly", "purchaseDate": 1_709_251_200_000,
            "quantity": 1, "signedDate": 1_709_251_260_000, "environment": "Production",
        ]
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let root = dir.appendingPathComponent("jws-root.pem")
        try Data(pki.root.pem.utf8).write(to: root)
        let kinds = JWSFactory.Kind.allCases
        let lines = try kinds.map { kind in
            String(
                decoding: try JSONSerialization.data(
                    withJSONObject: ["id": kind.rawValue, "receipt": factory.sign(payload, kind: kind)]),
                as: UTF8.self)
        }
        let out = try Self.export(lines, ["--format", "csv", "--trust-anchor", root.path], in: dir)
        let receipts = try Self.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.count == kinds.count)
        for (kind, row) in zip(kinds, receipts) {
            #expect(row["record_id"] == kind.rawValue)
            #expect(row["error_code"] == (kind.expectedCode ?? ""), "\(kind): \(row["error_detail"] ?? "")")
            #expect(row["verified"] == (kind == .good ? "true" : "false"))
        }
        let transactions = try Self.csv(out.appendingPathComponent("transactions.csv"))
        #expect(transactions.map { $0["record_id"] } == ["good"])
    }

    @Test func theBundleAndEnvironmentPoliciesApplyToJWS() throws {
        let sample = try #require(try Self.samples().first { $0.name == "transaction_sandbox_2024_lovepush" })
        let line = try Self.line(sample.name, sample.jws)
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wrongApp = try Self.export(
            [line], ["--format", "csv", "--trust-anchor", Self.appleG3, "--bundle-id", "com.example.other"],
            in: dir.appendingPathComponent("a"))
        let a = try Self.csv(wrongApp.appendingPathComponent("receipts.csv"))
        #expect(a.map { $0["error_code"] } == ["wrong_bundle_id"])
        let production = try Self.export(
            [line], ["--format", "csv", "--trust-anchor", Self.appleG3, "--environment", "production"],
            in: dir.appendingPathComponent("b"))
        let b = try Self.csv(production.appendingPathComponent("receipts.csv"))
        #expect(b.map { $0["error_code"] } == ["wrong_environment"])
        #expect(b.map { $0["status"] } == ["21007"])
        let rightApp = try Self.export(
            [line], ["--format", "csv", "--trust-anchor", Self.appleG3, "--bundle-id", "com.leinotek.LovePush"],
            in: dir.appendingPathComponent("c"))
        #expect(try Self.csv(rightApp.appendingPathComponent("receipts.csv")).map { $0["status"] } == ["0"])
    }

    @Test func aMixedFileKeepsEveryRecordOnceInOrder() throws {
        let samples = try Self.samples()
        let receiptNames = Array(Fixtures.realReceiptNames().prefix(4))
        #expect(receiptNames.count == 4)
        var lines: [String] = []
        // (line, index) of every receipts row expected, in input order.
        var expected: [String] = []
        for (i, sample) in samples.enumerated() {
            if i < receiptNames.count {
                let der = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(receiptNames[i]))
                lines.append(#"{"id":"r\#(i)","receipt":"\#(Data(der).base64EncodedString())"}"#)
                expected.append("\(lines.count)/-")
            }
            lines.append(try Self.line(sample.name, sample.jws))
            let nested = (sample.expected["nested"] as? [String: Any])?.count ?? 0
            for k in 0...nested { expected.append("\(lines.count)/\(k)") }
        }
        // An API page of two transactions, a statuses page, a broken line and an empty page.
        let transactions = samples.filter { $0.name.hasPrefix("transaction") }.map(\.jws)
        let renewal = try #require(samples.first { $0.name.hasPrefix("renewal") }?.jws)
        lines.append(
            String(
                decoding: try JSONSerialization.data(withJSONObject: ["signedTransactions": transactions]),
                as: UTF8.self))
        expected += ["\(lines.count)/0", "\(lines.count)/1"]
        let statuses: [String: Any] = [
            "bundleId": "com.leinotek.LovePush",
            "data": [["lastTransactions": [["signedTransactionInfo": transactions[0], "signedRenewalInfo": renewal]]]],
        ]
        lines.append(String(decoding: try JSONSerialization.data(withJSONObject: statuses), as: UTF8.self))
        expected += ["\(lines.count)/0", "\(lines.count)/1"]
        lines.append(#"{"id":"broken","receipt":"eyJhbGciOi.not-base64!.x"}"#)
        expected.append("\(lines.count)/0")
        lines.append(#"{"signedTransactions":[]}"#)
        expected.append("\(lines.count)/0")

        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Self.export(
            lines,
            [
                "--format", "csv", "--trust-anchor", Self.appleG3, "--trust-anchor",
                Fixtures.certsDir.appendingPathComponent("AppleIncRootCertificate.cer").path,
            ], in: dir)
        let receipts = try Self.csv(out.appendingPathComponent("receipts.csv"))
        let got = receipts.map { "\($0["line"] ?? "?")/\($0["jws_index"].flatMap { $0.isEmpty ? nil : $0 } ?? "-")" }
        #expect(got == expected)
        #expect(receipts.filter { $0["jws_index"] == "" }.allSatisfy { $0["record_kind"] == "receipt" })
        let n = lines.count
        #expect(receipts.filter { $0["line"] == "\(n - 1)" }.map { $0["error_code"] } == ["jws_malformed"])
        #expect(receipts.filter { $0["line"] == "\(n)" }.map { $0["error_code"] } == ["jws_malformed"])
        let pages = receipts.filter { $0["line"] == "\(n - 3)" || $0["line"] == "\(n - 2)" }
        #expect(pages.allSatisfy { $0["status"] == "0" && $0["verified"] == "true" })
    }

    @Test func jwsTransactionsArePurchasesOnceWithTheirRevocation() throws {
        let samples = try Self.samples()
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Self.export(
            try samples.map { try Self.line($0.name, $0.jws) }, ["--format", "csv", "--trust-anchor", Self.appleG3],
            in: dir)
        let transactions = try Self.csv(out.appendingPathComponent("transactions.csv"))
        let purchases = try Self.csv(out.appendingPathComponent("purchases.csv"))
        // Each distinct (environment, bundle, transaction) of the transactions rows once, seen as often as it
        // appears there.
        let ids = transactions.map { $0["transaction_id"] ?? "" }
        #expect(purchases.map { $0["transaction_id"] ?? "" }.sorted() == Array(Set(ids)).sorted())
        for p in purchases {
            let id = try #require(p["transaction_id"])
            #expect(p["occurrences"] == String(ids.filter { $0 == id }.count), "\(id)")
            #expect(p["environment"] == "Sandbox")
        }
        // The refunded renewal is in a refund notification and on its own: once, revoked, newest signedDate.
        let refunded = try #require(purchases.first { $0["transaction_id"] == "2000001032604840" })
        #expect(refunded["occurrences"] == "2")
        #expect(refunded["cancellation_date"] == "2025-10-16T05:19:59.000Z")
        #expect(refunded["last_seen"] == "2025-10-16T05:22:02.788Z")
    }

    @Test func inspectShowsANotificationWithItsNestedJWS() throws {
        let path = Self.jwsDir.appendingPathComponent("notification_refund_sandbox_2025_session.jws").path
        let (status, out, err) = try runTool(["inspect", path, "--trust-anchor", Self.appleG3, "--json"])
        #expect(status == 0, "\(err)")
        let report = try #require(try JSONSerialization.jsonObject(with: out) as? [String: Any])
        #expect(report["kind"] as? String == "notification")
        #expect(report["verified"] as? Bool == true)
        let nested = try #require(report["nested"] as? [[String: Any]])
        #expect(nested.map { $0["key"] as? String } == ["signedTransactionInfo", "signedRenewalInfo"])
        #expect(nested.allSatisfy { $0["verified"] as? Bool == true })
        let expected = try #require(try Self.samples().first { $0.name == "notification_refund_sandbox_2025_session" })
        #expect((report["payload"] as? NSDictionary) == (expected.expected["payload"] as? NSDictionary))
    }
}
