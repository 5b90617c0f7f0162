import Foundation
import ReceiptSynth
import Testing

/// Hostile inputs end to end through `receiptflow export`: each record is rejected with its specific code, the
/// run completes with one row per record (and goes on to the records after it), and memory stays bounded.
///
/// Every input file ends with an ordinary valid receipt, so a hostile record that derailed the run would show.
/// Each test prints one `hostile:` line (code, CPU time, peak RSS) for the hardening report.
@Suite(.serialized)
struct HostileInputTests {
    /// What one export produced: the measured run and the receipts rows in order.
    struct Export {
        var run: MeasuredRun
        var rows: [[String: Any]]
        var summary: [String: Any]

        func code(_ i: Int) -> String? { rows[i]["error_code"] as? String }
        func status(_ i: Int) -> Int? { rows[i]["status"] as? Int }
        func line(_ i: Int) -> Int? { rows[i]["line"] as? Int }
    }

    /// Writes `lines` to a file (each followed by `\n`) and exports it as NDJSON with the test CA as anchor.
    static func export(_ lines: [[UInt8]], _ extra: [String] = []) throws -> Export {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("input.ndjson")
        var bytes = [UInt8]()
        for l in lines { bytes += l + [0x0A] }
        try Data(bytes).write(to: input)
        return try export(file: input, in: dir, extra)
    }

    static func export(file: URL, in dir: URL, _ extra: [String] = []) throws -> Export {
        let out = dir.appendingPathComponent("out")
        let run = try MeasuredRun.run(
            [
                "export", file.path, "--out", out.path, "--format", "ndjson", "--trust-anchor", Hostile.rootPEM,
                "--threads", "2", "--quiet",
            ] + extra)
        var rows: [[String: Any]] = []
        var summary: [String: Any] = [:]
        if run.status == 0 {
            let text = try Data(contentsOf: out.appendingPathComponent("receipts.ndjson"))
            for l in text.split(separator: 0x0A) {
                rows.append(try #require(try JSONSerialization.jsonObject(with: Data(l)) as? [String: Any]))
            }
            let s = try Data(contentsOf: out.appendingPathComponent("summary.json"))
            summary = try #require(try JSONSerialization.jsonObject(with: s) as? [String: Any])
        }
        return Export(run: run, rows: rows, summary: summary)
    }

    static func temporaryDirectory() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("rf-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// An ordinary valid receipt line: the last line of every input.
    static let validLine = bytes(Hostile.line(Hostile.signed(Hostile.basePayload().encode()), id: "valid"))

    /// The peak RSS of exporting just one valid receipt, the baseline the hostile runs are compared with.
    static let baselineRSS: Int? = {
        (try? export([validLine]))?.run.maxRSS
    }()

    /// Memory a hostile record may add over the baseline: far below the sizes the inputs claim or hold.
    /// Under a sanitizer (scripts/sanitizers.sh builds the tool in the same scratch path, so it is instrumented too)
    /// RSS also counts ASan's quarantine, which keeps every freed block, and TSan's shadow memory: there the bound
    /// is looser, still far below the gigabytes a hostile length claims.
    static let allowance = MeasuredRun.sanitized ? 256 << 20 : 64 << 20

    /// Asserts that the run completed, that record `i` (1-based line `i + 1`) has `codes[i]`, that the final valid
    /// receipt is valid, and that peak memory stayed within the allowance; prints the measurements.
    static func expectCodes(
        _ name: String, _ e: Export, _ codes: [String], baseline: Int? = baselineRSS,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(e.run.status == 0, "export exited \(e.run.status): \(e.run.stderr)", sourceLocation: sourceLocation)
        #expect(e.rows.count == codes.count + 1, "one row per record", sourceLocation: sourceLocation)
        guard e.rows.count == codes.count + 1 else { return }
        for (i, c) in codes.enumerated() {
            #expect(e.code(i) == c, "line \(i + 1)", sourceLocation: sourceLocation)
            #expect(e.status(i) == 21002, "line \(i + 1)", sourceLocation: sourceLocation)
            #expect(e.line(i) == i + 1, sourceLocation: sourceLocation)
        }
        #expect(e.status(codes.count) == 0, "the valid receipt after the hostile ones", sourceLocation: sourceLocation)
        #expect(e.code(codes.count) == nil, sourceLocation: sourceLocation)
        var memory = "peak RSS not measured (/usr/bin/time is not installed)"
        if let rss = e.run.maxRSS, let base = baseline {
            #expect(
                rss < base + allowance, "peak RSS \(rss >> 20) MB vs baseline \(base >> 20) MB",
                sourceLocation: sourceLocation)
            memory = "peak RSS \(rss >> 20) MB (baseline \(base >> 20) MB)"
        }
        print(
            "hostile: \(name): \(codes.joined(separator: ",")) cpu \(String(format: "%.2f", e.run.cpuSeconds)) s, "
                + "wall \(String(format: "%.2f", e.run.wallSeconds)) s, \(memory)")
    }

    // MARK: - Nesting

    @Test func derNestingBombsAreRejected() throws {
        let lines = [
            // 100,000 indefinite-length SEQUENCEs: the container walk stops at the depth limit.
            Hostile.indefiniteNesting(100_000),
            // 100,000 definite-length SEQUENCEs: the container's first child is not the signedData OID.
            Hostile.definiteNesting(100_000),
            // A signed receipt whose payload is 100,000 indefinite-length SETs.
            Hostile.signed(Hostile.indefiniteNesting(100_000, tag: 0x31)),
            // A signed receipt whose in-app purchase holds a deep indefinite nesting as its attribute set.
            Hostile.signed(
                Hostile.tlv(
                    0x31,
                    Hostile.basePayload().attributes.flatMap { $0 }
                        + Hostile.tlv(
                            0x30,
                            [0x02, 0x01, 0x11, 0x02, 0x01, 0x01]
                                + Hostile.tlv(0x04, Hostile.indefiniteNesting(50_000, tag: 0x31))))),
        ].map { Self.bytes(Hostile.line($0, id: "nest")) }
        let e = try Self.export(lines + [Self.validLine])
        Self.expectCodes("DER nesting", e, ["limit_exceeded", "malformed_der", "limit_exceeded", "limit_exceeded"])
    }

    @Test func jsonNestingBombsAreInvalidJSON() throws {
        let arrays =
            #"{"id":"a","receipt-data":"AAAA","x":"# + String(repeating: "[", count: 400_000)
            + String(repeating: "]", count: 400_000) + "}"
        let objects =
            #"{"id":"o","x":"# + String(repeating: #"{"x":"#, count: 150_000)
            + String(repeating: "}", count: 150_001)
        // Unclosed: the scanner must stop at the depth limit, not run to the end looking for the closes.
        let unclosed = #"{"x":"# + String(repeating: "[", count: 900_000)
        let e = try Self.export([arrays, objects, unclosed].map(Self.bytes) + [Self.validLine])
        Self.expectCodes("JSON nesting", e, ["invalid_json", "invalid_json", "invalid_json"])
        #expect((e.rows.first?["error_detail"] as? String)?.hasPrefix("the JSON nests too deeply") == true)
    }

    // MARK: - Lengths

    @Test func lengthsClaimingGigabytesAreMalformed() throws {
        let filler = [UInt8](repeating: 0x05, count: 64)
        let lines = [
            // The ContentInfo claims 4 GB.
            [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF] + filler,
            // A length of length 8 (2^64-sized).
            [0x30, 0x88, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + filler,
            // Signed: the payload SET claims 2 GB.
            Hostile.signed([0x31, 0x84, 0x7F, 0xFF, 0xFF, 0xFF] + filler),
            // Signed: an attribute's OCTET STRING claims 4 GB inside a well-formed SET.
            Hostile.signed(
                Hostile.tlv(
                    0x31,
                    Hostile.basePayload().attributes.flatMap { $0 }
                        + Hostile.tlv(
                            0x30, [0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x84, 0xFF, 0xFF, 0xFF, 0xF0] + filler))),
        ].map { Self.bytes(Hostile.line($0, id: "len")) }
        let e = try Self.export(lines + [Self.validLine])
        Self.expectCodes("gigabyte lengths", e, ["malformed_der", "malformed_der", "malformed_der", "malformed_der"])
    }

    // MARK: - Counts

    @Test func hugeNumbersOfTinyAttributesAreLimitExceeded() throws {
        // 200,001 attributes of 10 bytes (2 MB of DER, 2.7 MB of base64): one over DERLimits.maxAttributes.
        let attributes = Hostile.signed(Hostile.manyTinyAttributes(200_001))
        // 20,001 empty in-app purchases: one over DERLimits.maxInAppEntries.
        let purchases = Hostile.signed(Hostile.manyEmptyPurchases(20_001))
        let lines = [attributes, purchases].map { Self.bytes(Hostile.line($0, id: "many")) }
        let options = ["--max-record-size", "\(8 << 20)"]
        let e = try Self.export(lines + [Self.validLine], options)
        // Larger records mean larger batch buffers: the baseline is a valid receipt with the same options.
        let base = try Self.export([Self.validLine], options).run.maxRSS
        Self.expectCodes("tiny attributes", e, ["limit_exceeded", "limit_exceeded"], baseline: base)
        #expect((e.rows.first?["error_detail"] as? String)?.contains("more attributes than the limit") == true)
        #expect((e.rows.dropFirst().first?["error_detail"] as? String)?.contains("in-app purchases") == true)
    }

    @Test func exactlyTheLimitsAreAccepted() throws {
        // At the limits, not over them: the receipt is valid and every purchase becomes a transaction.
        let purchases = Hostile.signed(Hostile.manyEmptyPurchases(20_000))
        let attributes = Hostile.signed(Hostile.manyTinyAttributes(200_000 - 6))
        let e = try Self.export(
            [purchases, attributes].map { Self.bytes(Hostile.line($0, id: "limit")) },
            ["--max-record-size", "\(8 << 20)"])
        #expect(e.run.status == 0)
        try #require(e.rows.count == 2)
        #expect(e.status(0) == 0)
        #expect((e.rows[0]["receipt"] as? [String: Any]).flatMap { ($0["in_app"] as? [Any])?.count } == 20_000)
        #expect(e.status(1) == 0)
        #expect(e.summary["transactions_written"] as? Int == 20_000)
    }

    // MARK: - A 100 MB line

    @Test func aHundredMegabyteLineIsRecordTooLargeWithoutBeingHeld() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("big.ndjson")
        try #require(FileManager.default.createFile(atPath: input.path, contents: nil))
        let h = try FileHandle(forWritingTo: input)
        try h.write(contentsOf: Data(#"{"id":"big","receipt-data":""#.utf8))
        let chunk = Data(repeating: UInt8(ascii: "A"), count: 1 << 20)
        for _ in 0..<100 { try h.write(contentsOf: chunk) }
        try h.write(contentsOf: Data("\"}\n{}\n".utf8) + Data(Self.validLine) + Data([0x0A]))
        try h.close()
        let e = try Self.export(file: input, in: dir)
        Self.expectCodes("100 MB line", e, ["record_too_large", "missing_field"])
        #expect(e.summary["bytes_read"] as? Int ?? 0 > 100 << 20)
    }

    @Test func aZstdBombOfAHundredMegabytesIsReadAsAStream() throws {
        // 100 MB of 'A' in one line from an 8 KB file (mostly the valid receipt): RLE blocks of 128 KB, 4 bytes each.
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("bomb.ndjson.zst")
        let frame = Hostile.zstdFrame([
            .raw(Self.bytes(#"{"id":"bomb","receipt-data":""#)), .run(UInt8(ascii: "A"), count: 100 << 20),
            .raw(Self.bytes("\"}\n{}\n") + Self.validLine + [0x0A]),
        ])
        #expect(frame.count < 16 << 10)
        try Data(frame).write(to: input)
        let e = try Self.export(file: input, in: dir)
        Self.expectCodes("zstd bomb (100 MB from \(frame.count) bytes)", e, ["record_too_large", "missing_field"])
    }

    @Test func aZstdFrameClaimingAGigabyteWindowFailsTheRunWithoutAllocatingIt() throws {
        // The frame header asks for a 2 GB window; the decoder refuses it (an input error: exit 1, a clear message).
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("window.ndjson.zst")
        try Data(Hostile.zstdFrame([.raw(Self.validLine + [0x0A])], windowLog: 31)).write(to: input)
        let e = try Self.export(file: input, in: dir)
        #expect(e.run.status == 1)
        #expect(e.run.stderr.contains("compressed with a zstd window larger than 128 MB"), "\(e.run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/receipts.ndjson").path))
        if let rss = e.run.maxRSS, let base = Self.baselineRSS { #expect(rss < base + Self.allowance) }
        print(
            "hostile: zstd 2 GB window: exit 1, \(e.run.stderr.split(separator: "\n").last { $0.contains("zstd") } ?? ""), "
                + "peak RSS \((e.run.maxRSS ?? 0) >> 20) MB")
    }

    // MARK: - NUL bytes and invalid UTF-8

    @Test func nulBytesAndInvalidUTF8InTheJSONLine() throws {
        let b64 = Data(Hostile.signed(Hostile.basePayload().encode())).base64EncodedString()
        let half = b64.index(b64.startIndex, offsetBy: b64.count / 2)
        let head = Self.bytes(#"{"id":"u","receipt-data":""# + b64[..<half])
        let tail = Self.bytes(b64[half...] + #""}"#)
        let lines: [[UInt8]] = [
            head + [0x00] + tail,  // a raw NUL inside the string: not JSON
            head + Self.bytes(#"\u0000"#) + tail,  // an escaped NUL: valid JSON, not base64
            head + [0xFF, 0xFE] + tail,  // bytes that are not UTF-8 inside the receipt string
            Self.bytes(#"{"id":"a"#) + [0xC0, 0xAF] + Self.bytes(#"","receipt-data":"\#(b64)"}"#),  // overlong
            Self.bytes(#"{"id":"s"#) + [0xED, 0xA0, 0x80] + Self.bytes(#"","receipt-data":"\#(b64)"}"#),  // surrogate
            Self.bytes(#"{"i"#) + [0x00] + Self.bytes(#"d":"k","receipt-data":"\#(b64)"}"#),  // NUL in a key
        ]
        let e = try Self.export(lines + [Self.validLine])
        Self.expectCodes(
            "NUL / invalid UTF-8 in JSON", e,
            ["invalid_json", "invalid_base64", "invalid_json", "invalid_json", "invalid_json", "invalid_json"])
    }

    @Test func nulBytesAndInvalidUTF8InReceiptAttributes() throws {
        func payload(_ edit: (inout PayloadBuilder) -> Void) -> [UInt8] {
            var b = Hostile.basePayload()
            edit(&b)
            return b.encode()
        }
        let receipts = [
            payload { $0.raw(2, DER.tlv(DER.tagUTF8String, Array("com.example".utf8) + [0x00] + Array("x".utf8))) },
            payload { $0.raw(2, DER.tlv(DER.tagUTF8String, [0x63, 0xFF, 0xFE, 0x64])) },
            payload { $0.raw(0, DER.tlv(DER.tagUTF8String, [0x50, 0xC0, 0x80])) },  // overlong NUL
            payload { $0.raw(3, DER.tlv(DER.tagIA5String, [0x31, 0xED, 0xB0, 0x80])) },  // a lone surrogate
            payload { $0.raw(12, DER.tlv(DER.tagIA5String, Array("2020-09-13T12:26:40Z".utf8) + [0x00])) },
            payload {
                var p = Hostile.purchase(1)
                p.raw(1702, DER.tlv(DER.tagUTF8String, [0x70, 0x00, 0x71]))
                $0.inApp(p)
            },
            payload {
                var p = Hostile.purchase(2)
                p.raw(1703, DER.tlv(DER.tagUTF8String, [0xF5, 0x80, 0x80, 0x80]))  // past U+10FFFF
                $0.inApp(p)
            },
        ]
        let e = try Self.export(
            receipts.map { Self.bytes(Hostile.line(Hostile.signed($0), id: "attr")) } + [Self.validLine])
        Self.expectCodes("NUL / invalid UTF-8 in attributes", e, Array(repeating: "malformed_attribute", count: 7))
        // A NUL character is named as such; bytes that are not UTF-8 (an overlong NUL among them) as not UTF-8.
        let details = e.rows.prefix(7).map { $0["error_detail"] as? String ?? "" }
        guard details.count == 7 else { return }
        for i in [0, 5] { #expect(details[i].contains("holds a NUL character (U+0000)"), "\(details[i])") }
        for i in [1, 2, 3, 6] { #expect(details[i].contains("not valid UTF-8"), "\(details[i])") }
    }

    // MARK: - Integers of 100 digits

    @Test func integersOfAHundredDigitsAreRejected() throws {
        let digits = String(repeating: "9", count: 100)
        let valid = Data(Hostile.signed(Hostile.basePayload().encode())).base64EncodedString()
        func payload(_ edit: (inout PayloadBuilder) -> Void) -> [UInt8] {
            var b = Hostile.basePayload()
            edit(&b)
            return Hostile.signed(b.encode())
        }
        let huge = Hostile.hugeInteger(decimalDigits: 100)
        let lines: [[UInt8]] = [
            // The receipt value is a 100-digit number, not a string.
            Self.bytes(#"{"id":"n","receipt-data":\#(digits)}"#),
            // app_item_id (attribute 1) of 100 digits does not fit int64.
            Self.bytes(Hostile.line(payload { $0.raw(1, huge) }, id: "i")),
            // An in-app web_order_line_item_id (1711) of 100 digits.
            Self.bytes(
                Hostile.line(
                    payload {
                        var p = Hostile.purchase(3)
                        p.raw(1711, huge)
                        $0.inApp(p)
                    }, id: "w")),
            // An attribute *type* of 100 digits: the attribute itself is malformed.
            Self.bytes(
                Hostile.line(
                    Hostile.signed(
                        Hostile.tlv(
                            0x31,
                            Hostile.basePayload().attributes.flatMap { $0 }
                                + Hostile.tlv(0x30, huge + [0x02, 0x01, 0x01, 0x04, 0x00]))), id: "t")),
        ]
        // Fits 64 bits but not the int32 quantity column: malformed rather than a silent null.
        let wideQuantity = Self.bytes(
            Hostile.line(
                payload {
                    var p = Hostile.purchase(4)
                    p.integer(1701, 1 << 40)
                    $0.inApp(p)
                }, id: "q"))
        // A 100-digit number as the record id is still a valid record: the id is copied as text.
        let numericID = Self.bytes(#"{"id":\#(digits),"receipt-data":"\#(valid)"}"#)
        let e = try Self.export(lines + [wideQuantity, numericID])
        Self.expectCodes(
            "100-digit integers", e,
            ["missing_field", "malformed_attribute", "malformed_attribute", "malformed_der", "malformed_attribute"])
        #expect(e.rows.last?["record_id"] as? String == digits)
    }
}
