import Foundation
import ReceiptTestSupport
import Testing

/// Receipts signed by a test CA (`generate`, no bad records), made once per test process, for CSV dumps.
final class CSVInputData: @unchecked Sendable {
    static let shared: CSVInputData = {
        do { return try CSVInputData() } catch { fatalError("cannot generate the CSV test data: \(error)") }
    }()

    let dir: URL
    let anchor: String
    /// The base64 receipts, in generated order (some wrapped in lines, as the generator writes a few).
    let receipts: [String]
    /// The line of each receipt in `g.ndjson`.
    let lines: [Int]
    /// The receipts without line breaks.
    let unwrapped: [String]

    init() throws {
        let tmp = FileManager.default.temporaryDirectory
        // Folders of earlier test processes that have exited: do not let their data pile up.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? [] {
            guard name.hasPrefix("rf-csv-input-"), let pid = Int32(name.dropFirst("rf-csv-input-".count)) else {
                continue
            }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: tmp.appendingPathComponent(name))
            }
        }
        dir = tmp.appendingPathComponent("rf-csv-input-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        anchor = dir.appendingPathComponent("ca/root.pem").path
        let out = dir.appendingPathComponent("g.ndjson").path
        let (status, _, err) = try runTool([
            "generate", "--count", "1200", "--seed", "41", "--bad-fraction", "0", "--out", out, "--ca-dir",
            dir.appendingPathComponent("ca").path, "--quiet",
        ])
        guard status == 0 else { throw ResumeTestError("generate failed: \(err)") }
        let text = try String(contentsOfFile: out, encoding: .utf8)
        var receipts: [String] = []
        var lines: [Int] = []
        for (k, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.allSatisfy(\.isWhitespace) {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            receipts.append(object["receipt-data"] as! String)
            lines.append(k + 1)
        }
        self.receipts = receipts
        self.lines = lines
        unwrapped = receipts.filter { !$0.contains("\n") }
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
}

/// One data row of a dump as written, and what its `receipts` row must say.
private struct DumpRow {
    var text: String
    var id: String
    var code: String
    /// The line the row starts on (set as the dump is written).
    var line = 0
}

/// A table's rows as field lists (RFC 4180: quoted fields, doubled quotes, line breaks inside quotes), header first.
private func csvRows(_ text: String) -> [[String]] {
    var rows: [[String]] = []
    var row: [String] = []
    var field = ""
    var quoted = false
    var it = Array(text).makeIterator()
    var pending: Character? = nil
    while let c = pending ?? it.next() {
        pending = nil
        if quoted {
            if c == "\"" {
                if let n = it.next() {
                    if n == "\"" { field.append("\"") } else { quoted = false; pending = n }
                } else {
                    quoted = false
                }
            } else {
                field.append(c)
            }
        } else if c == "\"" {
            quoted = true
        } else if c == "," {
            row.append(field)
            field = ""
        } else if c == "\n" {
            row.append(field)
            rows.append(row)
            row = []
            field = ""
        } else {
            field.append(c)
        }
    }
    if !row.isEmpty || !field.isEmpty { rows.append(row + [field]) }
    return rows
}

/// The `receipts` rows of a run as column name to text: `receipts.csv`, or the part files of a parts run in order.
private func receiptRows(_ out: URL) throws -> [[String: String]] {
    var texts: [String] = []
    let folder = out.appendingPathComponent("receipts")
    if let parts = try? FileManager.default.contentsOfDirectory(atPath: folder.path) {
        for name in parts.filter({ $0.hasPrefix("part-") }).sorted() {
            texts.append(try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
        }
    } else {
        texts.append(try String(contentsOf: out.appendingPathComponent("receipts.csv"), encoding: .utf8))
    }
    var rows: [[String: String]] = []
    for text in texts {
        let table = csvRows(text)
        guard let header = table.first else { continue }
        for r in table.dropFirst() { rows.append(Dictionary(uniqueKeysWithValues: zip(header, r))) }
    }
    return rows
}

private func summary(_ out: URL) throws -> [String: Any] {
    let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
    return try JSONSerialization.jsonObject(with: data) as! [String: Any]
}

@Suite(.serialized) struct CSVInputTests {
    let data = CSVInputData.shared

    /// A dump as a database tool writes it, with every awkward shape and four broken rows, and the row each record
    /// must give: valid receipts, and `invalid_csv` for the broken ones (no record id: their columns cannot be
    /// trusted). Lines are CRLF; a byte-order mark comes first. Each row's line is counted as the text is written.
    private func dump() -> (bytes: [UInt8], rows: [DumpRow], blankLines: Int) {
        let r = data.unwrapped
        let wrapped = stride(from: 0, to: r[2].count, by: 76).map {
            let a = r[2].index(r[2].startIndex, offsetBy: $0)
            return String(r[2][a..<(r[2].index(a, offsetBy: 76, limitedBy: r[2].endIndex) ?? r[2].endIndex)])
        }.joined(separator: "\n")
        let written = [
            DumpRow(text: "u1,\(r[0]),2024-01-01", id: "u1", code: ""),
            DumpRow(text: "\"u\"\"2\",\"\(r[1])\",\"2024, Jan 2\"", id: "u\"2", code: ""),
            DumpRow(text: "u3,\"\(wrapped)\",\"a\r\nb\"", id: "u3", code: ""),
            DumpRow(text: "u4,\(r[3])", id: "", code: "invalid_csv"),
            DumpRow(text: "u5,\(r[3]),x,y", id: "", code: "invalid_csv"),
            DumpRow(text: "u6,ab\"c,x", id: "", code: "invalid_csv"),
            DumpRow(text: "", id: "", code: "blank"),
            DumpRow(text: "u7,\(r[4]),", id: "u7", code: ""),
            DumpRow(text: "u8,\"\(r[4]),z", id: "", code: "invalid_csv"),
        ]
        var text = "\u{FEFF}user_id,receipt_data,created_at\r\n"
        var rows: [DumpRow] = []
        for var row in written {
            row.line = 1 + text.utf8.filter { $0 == 0x0A }.count
            text += row.text + "\r\n"
            if row.code != "blank" { rows.append(row) }
        }
        return (Array(text.utf8), rows, written.count - rows.count)
    }

    @Test(arguments: ["plain", "gzip", "zstd", "stdin"])
    func aDumpWithQuotesLineBreaksABOMAndBrokenRowsGivesOneRowPerRecord(arrival: String) throws {
        let d = dump()
        var bytes = d.bytes
        switch arrival {
        case "gzip": bytes = try #require(try ToolFilter.run("gzip", ["-c"], bytes), "the gzip tool is needed")
        case "zstd": bytes = try #require(try ToolFilter.run("zstd", ["-c", "-q"], bytes), "the zstd tool is needed")
        default: break
        }
        let input = data.path("dump-\(arrival)-\(UUID().uuidString).csv")
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        let out = URL(fileURLWithPath: data.path("out-\(arrival)-\(UUID().uuidString)"))
        let source = arrival == "stdin" ? "-" : input
        let (status, _, err) = try runTool(
            [
                "export", source, "--out", out.path, "--format", "csv", "--csv-raw", "--trust-anchor", data.anchor,
                "--quiet", "--id-field", "user_id",
            ],
            stdin: arrival == "stdin" ? Data(bytes) : nil)
        #expect(status == 0, "\(err)")
        let rows = try receiptRows(out)
        #expect(rows.count == d.rows.count, "\(rows.map { $0["line"] ?? "" })")
        #expect(rows.map { $0["line"] ?? "" } == d.rows.map { String($0.line) })
        for (got, expected) in zip(rows, d.rows) {
            #expect(got["source"] == source)
            #expect(got["record_id"] == expected.id, "line \(got["line"] ?? "")")
            #expect(got["error_code"] == expected.code, "line \(got["line"] ?? ""): \(got["error_detail"] ?? "")")
            #expect(got["status"] == (expected.code.isEmpty ? "0" : "21002"))
        }
        let s = try summary(out)
        #expect(s["records"] as? Int == d.rows.count)
        #expect(
            (s["by_error_code"] as? [String: Int])?["invalid_csv"] == d.rows.filter { $0.code == "invalid_csv" }.count)
        #expect(s["blank_lines"] as? Int == d.blankLines)
        #expect(s["valid"] as? Int == d.rows.filter { $0.code.isEmpty }.count)
    }

    /// `--field`, `--id-field` and `--device-id-field` name header columns; a JWS in the receipt cell is read as one.
    @Test func theFieldOptionsNameHeaderColumnsAndAJWSCellIsReadAsJWS() throws {
        let jws = try String(
            contentsOf: Fixtures.jwsDir.appendingPathComponent("transaction_sandbox_2024_lovepush.jws"), encoding: .utf8
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let r = data.unwrapped
        let text =
            "device,blob,key\nE621E1F8-C36C-495A-93FC-0C247A3E6E5F,\(r[5]),k1\nnot-a-device,\(r[6]),k2\n,\(jws),k3\n"
        let input = data.path("fields-\(UUID().uuidString).csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: input))
        let out = URL(fileURLWithPath: data.path("out-fields-\(UUID().uuidString)"))
        let (status, _, err) = try runTool([
            "export", input, "--out", out.path, "--format", "csv", "--trust-anchor", data.anchor, "--quiet",
            "--field", "blob", "--id-field", "key", "--device-id-field", "device",
        ])
        #expect(status == 0, "\(err)")
        let rows = try receiptRows(out)
        #expect(rows.map { $0["record_id"] ?? "" } == ["k1", "k2", "k3"])
        #expect(rows.map { $0["line"] ?? "" } == ["2", "3", "4"])
        #expect(rows[0]["status"] == "0", "\(rows[0])")
        #expect(rows[1]["error_code"] == "invalid_device_id", "\(rows[1])")
        #expect(rows[2]["record_kind"] == "jws_transaction", "\(rows[2])")
        // Without --field, `blob` names no receipt field: the file is read as lines, as before.
        let plain = URL(fileURLWithPath: data.path("out-plain-\(UUID().uuidString)"))
        let (again, _, err2) = try runTool([
            "export", input, "--out", plain.path, "--format", "csv", "--trust-anchor", data.anchor, "--quiet",
        ])
        #expect(again == 0, "\(err2)")
        let lines = try receiptRows(plain)
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { $0["error_code"] == "invalid_base64" }, "\(lines.map { $0["error_code"] ?? "" })")
    }

    /// `--user-field` names a header column too: its cell is the record's `user_id` (quoted commas kept, an empty
    /// cell null), and the purchases of a valid receipt carry the newest user id that has one.
    @Test func theUserFieldNamesAHeaderColumn() throws {
        let r = data.unwrapped
        let text = "receipt_data,customer\n\(r[7]),\"u-1, Ltd\"\n\(r[8]),\n\(r[9]),42\n"
        let input = data.path("users-\(UUID().uuidString).csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: input))
        let out = URL(fileURLWithPath: data.path("out-users-\(UUID().uuidString)"))
        let (status, _, err) = try runTool([
            "export", input, "--out", out.path, "--format", "csv", "--trust-anchor", data.anchor, "--quiet",
            "--user-field", "customer",
        ])
        #expect(status == 0, "\(err)")
        let rows = try receiptRows(out)
        #expect(rows.map { $0["user_id"] ?? "?" } == ["u-1, Ltd", "", "42"])
        #expect(rows.allSatisfy { $0["status"] == "0" }, "\(rows.map { $0["error_code"] ?? "" })")
        let purchases = csvRows(try String(contentsOf: out.appendingPathComponent("purchases.csv"), encoding: .utf8))
        let column = try #require(purchases.first?.firstIndex(of: "user_id"))
        let users = Set(purchases.dropFirst().map { $0[column] })
        #expect(!users.isEmpty && users.isSubset(of: ["u-1, Ltd", "42"]), "\(users)")
    }

    /// A file whose first line is not a header stays NDJSON: the generated receipts are all valid, line by line.
    @Test func anNDJSONFileIsReadAsBefore() throws {
        let out = URL(fileURLWithPath: data.path("out-ndjson-\(UUID().uuidString)"))
        let (status, _, err) = try runTool([
            "export", data.path("g.ndjson"), "--out", out.path, "--format", "csv", "--trust-anchor", data.anchor,
            "--quiet",
        ])
        #expect(status == 0, "\(err)")
        let rows = try receiptRows(out)
        #expect(rows.count == data.receipts.count)
        #expect(rows.allSatisfy { $0["status"] == "0" })
        #expect(rows.map { $0["line"] ?? "" } == data.lines.map(String.init))
    }

    /// Every generated receipt as a CSV row (quoted with line breaks every tenth row and where the receipt is
    /// wrapped, a broken row every hundredth), for runs in parts.
    private func largeDump() throws -> String {
        var text = "id,receipt_data\n"
        for (k, r) in data.receipts.enumerated() {
            if k % 100 == 50 { text += "broken-\(k)\n" }
            if k % 10 == 3 || r.contains("\n") {
                text += "r\(k),\"\(r.prefix(100))\n\(r.dropFirst(100))\"\n"
            } else {
                text += "r\(k),\(r)\n"
            }
        }
        let input = data.path("large-\(UUID().uuidString).csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: input))
        return input
    }

    /// Parts runs and a run killed and resumed give the rows of one plain run, line numbers included.
    @Test func partsRunsAndAResumedRunGiveTheRowsOfAPlainRun() throws {
        let input = try largeDump()
        func args(_ out: URL, _ extra: [String]) -> [String] {
            [
                "export", input, "--out", out.path, "--format", "csv", "--trust-anchor", data.anchor, "--quiet",
                "--threads", "1",
            ] + extra
        }
        let clean = URL(fileURLWithPath: data.path("out-clean-\(UUID().uuidString)"))
        let (status, _, err) = try runTool(args(clean, []))
        #expect(status == 0, "\(err)")
        let want = try receiptRows(clean)
        #expect(want.count == data.receipts.count + data.receipts.count / 100)
        #expect(want.filter { $0["error_code"] == "invalid_csv" }.count == data.receipts.count / 100)
        #expect(want.filter { $0["status"] == "0" }.count == data.receipts.count)

        let parts = URL(fileURLWithPath: data.path("out-parts-\(UUID().uuidString)"))
        let (partsStatus, _, partsErr) = try runTool(args(parts, ["--part-records", "100"]))
        #expect(partsStatus == 0, "\(partsErr)")
        #expect(try receiptRows(parts) == want)

        let resumed = URL(fileURLWithPath: data.path("out-resumed-\(UUID().uuidString)"))
        let p = Process()
        p.executableURL = Fixtures.executable
        p.arguments = args(resumed, ["--part-records", "100"])
        p.standardError = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let receiptsFolder = resumed.appendingPathComponent("receipts").path
        let deadline = Date().addingTimeInterval(120)
        while p.isRunning && Date() < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: receiptsFolder)) ?? []
            if names.filter({ $0.hasPrefix("part-") }).count >= 2 { break }
            usleep(1000)
        }
        let killed = p.isRunning
        if killed { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        #expect(killed, "the run finished before it could be killed")
        let (resumeStatus, _, resumeErr) = try runTool(args(resumed, ["--resume"]))
        #expect(resumeStatus == 0, "\(resumeErr)")
        #expect(try receiptRows(resumed) == want)
    }
}
