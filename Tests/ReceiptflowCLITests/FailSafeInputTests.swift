import Foundation
import ReceiptTestSupport
import Testing

/// Inputs the way companies store receipts, end to end: every record gets exactly one row with the status the
/// plain NDJSON file gives it, or the run fails up front (exit 1) naming what it found and leaves `--out` as it
/// was.
@Suite(.serialized)
struct FailSafeInputTests {
    /// Exports `data` (written to a file named `name`) and checks every record against the plain file's statuses.
    private func expectSameRows(_ data: Data, _ name: String, _ lines: [String], _ truth: [String: Int]) throws {
        let dir = try FailSafe.temporaryDirectory("input")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent(name)
        try data.write(to: input)
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(FailSafe.args([input.path], out))
        #expect(status == 0, "\(name): \(err)")
        let rows = try FailSafe.rows(out)
        #expect(rows.count == lines.count, "\(name)")
        #expect(Set(rows.map(\.id)).count == lines.count, "\(name): a record is missing or repeated")
        for r in rows { #expect(truth[r.id] == r.status, "\(name) \(r.id): \(r.code ?? "")") }
    }

    @Test func bomGzipAndURLSafeBase64GiveEveryRecordItsTrueStatus() throws {
        let lines = try FailSafe.lines()
        let truth = try FailSafe.reference(lines)
        #expect(truth.values.contains(0), "the reference has valid receipts, so a wrong decode would show")
        let plain = FailSafe.text(lines)
        try expectSameRows(Data([0xEF, 0xBB, 0xBF]) + plain, "bom.ndjson", lines, truth)
        // URL-safe alphabet without padding, as JWT-minded code writes it.
        let urlSafe = try lines.map { line -> String in
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
            let b64 = try #require(o["receipt-data"]).replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            return #"{"id":"\#(o["id"]!)","receipt-data":"\#(b64)"}"#
        }
        #expect(urlSafe != lines)
        try expectSameRows(FailSafe.text(urlSafe), "urlsafe.ndjson", lines, truth)
        // gzip made by the real tool: one member, and two members concatenated (BOM in the second one's text
        // stays a record's bytes only at the start of the stream, so the second part has none).
        let one = try #require(try FailSafe.filter("gzip", ["-c"], [UInt8](plain)), "the gzip tool makes the input")
        try expectSameRows(Data(one), "one.ndjson.gz", lines, truth)
        let half = lines.count / 2
        let a = try #require(try FailSafe.filter("gzip", ["-c"], [UInt8](FailSafe.text(Array(lines[..<half])))))
        let b = try #require(try FailSafe.filter("gzip", ["-c", "-9"], [UInt8](FailSafe.text(Array(lines[half...])))))
        try expectSameRows(Data(a + b), "two-members.gz", lines, truth)
    }

    @Test func aStoreKit2JWSIsReadAsOneAndTheOtherRecordsGetTheirCodes() throws {
        let lines = try FailSafe.lines()
        let truth = try FailSafe.reference(lines)
        let jwsDir = Fixtures.jwsDir
        let jws = try String(
            contentsOf: jwsDir.appendingPathComponent("transaction_sandbox_2024_lovepush.jws"), encoding: .utf8
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(jws.hasPrefix("eyJ"))
        let dir = try FailSafe.temporaryDirectory("jws")
        defer { try? FileManager.default.removeItem(at: dir) }
        // In an NDJSON field, and as a line of a base64 file (one receipt per line).
        let input = dir.appendingPathComponent("mixed.ndjson")
        try FailSafe.text([#"{"id":"jws","receipt-data":"\#(jws)"}"#] + lines).write(to: input)
        let bare = dir.appendingPathComponent("bare.txt")
        let receipt = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(Fixtures.realReceiptNames()[0]))
        try FailSafe.text([Data(receipt).base64EncodedString(), jws]).write(to: bare)
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(FailSafe.args([input.path, bare.path], out))
        #expect(status == 0, "\(err)")
        let rows = try FailSafe.rows(out)
        #expect(rows.count == lines.count + 3)
        #expect(rows[rows.count - 2].code != "jws_malformed")
        // Read and verified as a JWS transaction (docs/jws.md): its chain ends at Apple Root CA - G3, which
        // `--trust-anchor` (Apple Inc. Root alone) leaves out.
        for r in [rows.first!, rows.last!] {
            #expect(r.status == 21003)
            #expect(r.code == "untrusted_chain")
        }
        for r in rows.dropFirst().prefix(lines.count) { #expect(truth[r.id] == r.status, "\(r.id)") }
    }

    @Test func unreadableInputsFailUpFrontAndLeaveAnEarlierRunAsItWas() throws {
        let lines = try FailSafe.lines()
        let plain = [UInt8](FailSafe.text(lines))
        let dir = try FailSafe.temporaryDirectory("unknown")
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.ndjson")
        try Data(plain).write(to: good)
        let out = dir.appendingPathComponent("out")
        let (first, _, firstErr) = try runTool(FailSafe.args([good.path], out, "csv"))
        #expect(first == 0, "\(firstErr)")
        let before = FailSafe.snapshot(out)
        #expect(before["summary.json"] != nil)

        var cases: [(String, [UInt8], String)] = [
            ("x.bz2", [0x42, 0x5A, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26] + plain, "bzip2"),
            ("x.xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00] + plain, "xz"),
            ("x.lz4", [0x04, 0x22, 0x4D, 0x18] + plain, "lz4"),
            ("x.zip", [0x50, 0x4B, 0x03, 0x04] + plain, "zip archive"),
            ("x.7z", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C] + plain, "7z archive"),
            ("nul.ndjson", Array(plain[0..<200]) + [0, 0, 0] + plain, "NUL byte"),
            ("latin1.ndjson", Array(plain[0..<10]) + [0xE9, 0x20] + plain, "not UTF-8"),
            (
                "receipt.der",
                try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(Fixtures.realReceiptNames()[0])), "DER"
            ),
        ]
        // The real tools' output too, where they are installed.
        for (tool, name, what) in [("bzip2", "t.bz2", "bzip2"), ("xz", "t.xz", "xz")] {
            if let bytes = try FailSafe.filter(tool, ["-c"], plain) { cases.append((name, bytes, what)) }
        }
        for (name, bytes, what) in cases {
            let input = dir.appendingPathComponent(name)
            try Data(bytes).write(to: input)
            for format in ["csv", "parquet"] {
                let (status, _, err) = try runTool(FailSafe.args([input.path], out, format, ["--overwrite"]))
                #expect(status == 1, "\(name) \(format): \(err)")
                #expect(err.contains(what), "\(name): \(err)")
                #expect(FailSafe.snapshot(out) == before, "\(name) \(format): the folder changed")
            }
        }
    }

    @Test func aFIFOWithASlowWriterAndDevStdinAreReadOnceAndWhole() throws {
        let lines = try FailSafe.lines()
        let truth = try FailSafe.reference(lines)
        let dir = try FailSafe.temporaryDirectory("fifo")
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("in.fifo")
        try FailSafe.fifo(fifo)
        let writer = Thread {
            // Opening blocks until the exporter opens the FIFO for reading; a second open by it would find no
            // writer (or kill this one with SIGPIPE).
            guard let h = FileHandle(forWritingAtPath: fifo.path) else { return }
            for chunk in stride(from: 0, to: lines.count, by: 5) {
                h.write(Data((lines[chunk..<min(chunk + 5, lines.count)].joined(separator: "\n") + "\n").utf8))
                usleep(150_000)
            }
            try? h.close()
        }
        writer.start()
        let out = dir.appendingPathComponent("out")
        let (status, _, err) = try runTool(FailSafe.args([fifo.path], out))
        #expect(status == 0, "\(err)")
        let rows = try FailSafe.rows(out)
        #expect(rows.count == lines.count)
        for r in rows { #expect(truth[r.id] == r.status, "\(r.id)") }

        let out2 = dir.appendingPathComponent("out2")
        let (s2, _, e2) = try runTool(FailSafe.args(["/dev/stdin"], out2), stdin: FailSafe.text(lines))
        #expect(s2 == 0, "\(e2)")
        #expect(try FailSafe.rows(out2).count == lines.count)
    }
}
