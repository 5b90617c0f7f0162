import Foundation
import ReceiptIO
import ReceiptModel
import ReceiptTestSupport
import Testing

/// Reads every record of `bytes` through `InputOpener` (format detection included), as (line, text).
private func records(_ bytes: [UInt8], chunk: Int = 1 << 20) throws -> [(Int, String)] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-inputs-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("input")
    try Data(bytes).write(to: file)
    var options = ReaderOptions()
    options.rejectsUnreadableContent = true
    let reader = try RecordReader.open(file.path, options: options)
    return try readAll(reader, options).records.map { ($0.line, $0.text) }
}

private let lines = (1...300).map { #"{"id":"\#($0)","receipt-data":"TUlJQ\#($0)"}"# }
private let text = Array((lines.joined(separator: "\n") + "\n").utf8)

@Suite struct InputFormatsTests {
    @Test func aLeadingByteOrderMarkIsNotPartOfTheFirstRecord() throws {
        let got = try records([0xEF, 0xBB, 0xBF] + text)
        #expect(got.map(\.1) == lines)
        #expect(got.first?.0 == 1)
        // Only at the start of the stream: one inside a later line stays (and fails as that record's data).
        let inner = try records(Array("a\n\u{FEFF}b\n".utf8))
        #expect(inner.map(\.1) == ["a", "\u{FEFF}b"])
    }

    @Test func gzipSingleAndMultiMemberDecodesToTheRecords() throws {
        guard let one = try ToolFilter.run("gzip", ["-c"], text) else {
            Issue.record("the gzip tool is needed to make the test input")
            return
        }
        #expect(try records(one).map(\.1) == lines)
        // Two members (as `cat a.gz b.gz` writes) decode to both contents, in order.
        let half = text.count / 2
        let cut = text[..<half].lastIndex(of: 0x0A)! + 1
        let a = try #require(try ToolFilter.run("gzip", ["-c"], Array(text[..<cut])))
        let b = try #require(try ToolFilter.run("gzip", ["-c", "-9"], Array(text[cut...])))
        #expect(try records(a + b).map(\.1) == lines)
        #expect(try records(a + b).map(\.0) == Array(1...300))
    }

    @Test func truncatedOrTrailingGzipDataFailsTheInput() throws {
        guard let one = try ToolFilter.run("gzip", ["-c"], text) else {
            Issue.record("the gzip tool is needed to make the test input")
            return
        }
        #expect { try records(Array(one[..<(one.count - 10)])) } throws: {
            ($0 as? InputError)?.message.contains("truncated") == true
        }
        #expect { try records(one + Array("junk\n".utf8)) } throws: {
            ($0 as? InputError)?.message.contains("not another gzip member") == true
        }
    }

    @Test func otherCompressionsArchivesAndBinaryDataAreNamed() throws {
        let cases: [([UInt8], String)] = [
            ([0x42, 0x5A, 0x68, 0x39] + text, "bzip2"),
            ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00] + text, "xz"),
            ([0x04, 0x22, 0x4D, 0x18] + text, "lz4"),
            ([0x50, 0x4B, 0x03, 0x04] + text, "zip archive"),
            ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C] + text, "7z archive"),
            (Array(text[0..<100]) + [0] + text, "NUL byte at offset 100"),
            (Array(text[0..<50]) + [0xC3, 0x28] + text, "not UTF-8 text at offset 51"),
        ]
        for (bytes, name) in cases {
            let problem = bytes.withUnsafeBytes { InputSniffer.problem($0) }
            #expect(problem?.contains(name) == true, "\(name)")
            var failure: InputError? = nil
            do { _ = try records(bytes) } catch let e as InputError { failure = e }
            #expect(failure?.message.contains(name) == true, "\(name): \(failure?.message ?? "no error")")
        }
        if let bz = try ToolFilter.run("bzip2", ["-c"], text) {
            var failure: InputError? = nil
            do { _ = try records(bz) } catch let e as InputError { failure = e }
            #expect(failure?.message.contains("bzip2") == true)
        }
        // Text in other scripts is UTF-8, and a sequence cut by the end of the window may go on after it.
        let utf8 = Array("{\"id\":\"ü€😀\"}\n".utf8)
        #expect(utf8.withUnsafeBytes { InputSniffer.problem($0) } == nil)
        let cut = Array(repeating: UInt8(ascii: "a"), count: InputSniffer.window - 1) + [0xE2, 0x82]
        #expect(cut.withUnsafeBytes { InputSniffer.problem($0) } == nil)
    }

    @Test func utf16AndUTF32TextIsNamedWithTheIconvCommandThatConvertsIt() throws {
        let sample = String(decoding: text[0..<2000], as: UTF8.self) + "é€"
        func utf16(_ bigEndian: Bool) -> [UInt8] {
            sample.utf16.flatMap { u in
                bigEndian ? [UInt8(u >> 8), UInt8(u & 0xFF)] : [UInt8(u & 0xFF), UInt8(u >> 8)]
            }
        }
        func utf32LE() -> [UInt8] {
            sample.unicodeScalars.flatMap { s in (0..<4).map { UInt8((s.value >> (8 * $0)) & 0xFF) } }
        }
        let cases: [([UInt8], String, String)] = [
            ([0xFF, 0xFE] + utf16(false), "UTF-16", "UTF-16 text (with a byte-order mark)"),
            ([0xFE, 0xFF] + utf16(true), "UTF-16", "UTF-16 text (with a byte-order mark)"),
            (utf16(false), "UTF-16LE", "little-endian, without a byte-order mark"),
            (utf16(true), "UTF-16BE", "big-endian, without a byte-order mark"),
            ([0xFF, 0xFE, 0x00, 0x00] + utf32LE(), "UTF-32", "UTF-32 text"),
        ]
        for (bytes, encoding, form) in cases {
            #expect(bytes.withUnsafeBytes { InputSniffer.wideTextEncoding($0) } == encoding, "\(encoding)")
            var failure: InputError? = nil
            do { _ = try records(bytes) } catch let e as InputError { failure = e }
            #expect(failure?.code == .wideText, "\(encoding)")
            let message = failure?.message ?? ""
            #expect(message.contains(form), "\(message)")
            #expect(message.contains("`iconv -f \(encoding) -t UTF-8 "), "\(message)")
            #expect(!message.contains("binary data"), "\(message)")
        }
        // UTF-8 text, in any script, and the other refusals are not taken for UTF-16.
        for other in [text, Array("{\"id\":\"ü€😀\"}\n".utf8), Array(text[0..<100]) + [0] + text, [0x41, 0, 0x42]] {
            #expect(other.withUnsafeBytes { InputSniffer.wideTextEncoding($0) } == nil)
        }
        #expect(try records(text).count == lines.count)
    }

    @Test
    func urlSafeUnpaddedBase64OfARealReceiptDecodesLikeTheStandardForm() throws {
        for name in Fixtures.realReceiptNames() {
            let der = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(name))
            let standard = Data(der).base64EncodedString()
            let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(urlSafe != standard)
            for form in [standard, urlSafe] {
                let input = Array(form.utf8)
                var out = [UInt8](repeating: 0, count: Base64.maxDecodedCount(input.count))
                let n = try input.withUnsafeBytes { i in
                    try out.withUnsafeMutableBytes { o in try Base64.decode(i, into: o) }
                }
                #expect(Array(out[0..<n]) == der, "\(name)")
            }
        }
        // Padding rules are unchanged: wrong amounts and data after it still fail.
        for bad in ["QUJD=", "QU=JD", "QUI=x", "Q"] {
            let input = Array(bad.utf8)
            var out = [UInt8](repeating: 0, count: Base64.maxDecodedCount(input.count))
            #expect(throws: ReceiptError.self) {
                try input.withUnsafeBytes { i in try out.withUnsafeMutableBytes { o in try Base64.decode(i, into: o) } }
            }
        }
    }

    @Test
    func aStoreKit2JWSIsRecognisedAndAReceiptIsNot() throws {
        let dir = Fixtures.jwsDir
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jws") }
        #expect(!names.isEmpty)
        for name in names {
            let jws = Array(try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8).utf8)
            #expect(jws.withUnsafeBytes { JWSDetector.isJWS($0) }, "\(name)")
        }
        let receipt = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(Fixtures.realReceiptNames()[0]))
        let b64 = Array(Data(receipt).base64EncodedString().utf8)
        #expect(!b64.withUnsafeBytes { JWSDetector.isJWS($0) })
        // Three dotted segments whose header is not JSON are not a JWS ("abcd" decodes to "i\xb7\x1d").
        for other in ["abcd.efgh.ijkl", "eyJh.eyJh", "eyJh..eyJh", "eyJh.eyJh.eyJh.eyJh", "eyJh.e%Jh.eyJh"] {
            #expect(!Array(other.utf8).withUnsafeBytes { JWSDetector.isJWS($0) }, "\(other)")
        }
    }
}
