import Foundation
import ReceiptTestSupport
import Testing

/// Input and output paths whose bytes are not UTF-8 are used exactly as given: files are read and folders made
/// under their own names, and messages, rows, `summary.json` and the manifest show them escaped (`\xNN`).
@Suite(.serialized)
struct RawPathExportTests {
    /// `receiptflow ARGS` run by the shell in `dir`, so that arguments can hold any bytes: `args` is shell text in
    /// which `$(printf '\377')` stands for a byte.
    private func run(_ args: String, in dir: URL) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "cd \"$1\" && exec \"$0\" " + args, Fixtures.executable.path, dir.path]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: e, as: UTF8.self))
    }

    /// The names in `dir` as bytes.
    private func names(_ dir: [UInt8]) -> [[UInt8]] {
        var c = dir.map { CChar(bitPattern: $0) } + [0]
        guard let d = opendir(&c) else { return [] }
        defer { closedir(d) }
        var out: [[UInt8]] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                Array(raw.prefix(while: { $0 != 0 }))
            }
            if name != [0x2E] && name != [0x2E, 0x2E] { out.append(name) }
        }
        return out
    }

    /// The bytes of `dir/name`, read by the system's own calls.
    private func read(_ path: [UInt8]) -> Data? {
        var c = path.map { CChar(bitPattern: $0) } + [0]
        let fd = open(&c, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return FileHandle(fileDescriptor: fd).readDataToEndOfFile()
    }

    /// Byte names with their shell spelling and the escaped text the tool shows.
    private static let cases: [(bytes: [UInt8], shell: String, text: String)] = [
        (Array("in".utf8) + [0xFF], "in$(printf '\\377')", "in\\xFF"),
        (Array("caf".utf8) + [0xE9], "caf$(printf '\\351')", "caf\\xE9"),
        ([0xC3, 0x28] + Array("x".utf8), "$(printf '\\303(')x", "\\xC3(x"),
    ]

    @Test func inputsAndOutputFoldersThatAreNotUTF8AreUsedUnchanged() throws {
        let dir = try FailSafe.temporaryDirectory("rawpath")
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = try FailSafe.lines()
        let base = Array(dir.path.utf8) + [0x2F]
        for (k, c) in Self.cases.enumerated() {
            // The input file under the raw name, and an output folder nested under another raw name.
            let input = c.bytes + Array(".ndjson".utf8)
            var path = (base + input).map { CChar(bitPattern: $0) } + [0]
            let fd = open(&path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            #expect(fd >= 0)
            let text = FailSafe.text(lines)
            _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            let outTop = Array("o\(k)".utf8) + c.bytes
            let args =
                "export \"\(c.shell).ndjson\" --out \"o\(k)\(c.shell)/sub\(c.shell)\" --format csv "
                + "--trust-anchor '\(FailSafe.apple)'"
            let (status, err) = try run(args, in: dir)
            #expect(status == 0, "\(c.text): \(err)")
            #expect(err.contains("written to o\(k)\(c.text)/sub\(c.text)"), "\(err)")
            // The folder has the exact bytes given; nothing was made under a repaired (U+FFFD) name.
            #expect(names(base).contains(outTop), "\(c.text)")
            #expect(!names(base).contains { Array($0).starts(with: Array("o\(k)".utf8)) && $0 != outTop })
            let out = base + outTop + [0x2F] + Array("sub".utf8) + c.bytes
            let summary = try #require(read(out + Array("/summary.json".utf8)))
            let json = try #require(try JSONSerialization.jsonObject(with: summary) as? [String: Any])
            #expect(json["inputs"] as? [String] == [c.text + ".ndjson"])
            #expect(json["records"] as? Int == lines.count)
            let rows = String(decoding: try #require(read(out + Array("/receipts.csv".utf8))), as: UTF8.self)
                .split(separator: "\n").dropFirst()
            #expect(rows.count == lines.count && rows.allSatisfy { $0.hasPrefix(c.text + ".ndjson,") })
        }
    }

    @Test func aMissingInputIsNamedEscapedAndNoFolderIsMade() throws {
        let dir = try FailSafe.temporaryDirectory("rawpath-missing")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in Self.cases {
            let (status, err) = try run(
                "export \"nope\(c.shell)\" --out \"out\(c.shell)\" --format csv --trust-anchor '\(FailSafe.apple)'",
                in: dir)
            #expect(status == 1 && err.contains("nope\(c.text)"), "\(err)")
            #expect(names(Array(dir.path.utf8)).isEmpty, "\(c.text)")
        }
    }

    @Test func aPartsRunInAFolderThatIsNotUTF8ResumesAndChecksItsIdentity() throws {
        let dir = try FailSafe.temporaryDirectory("rawpath-parts")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FailSafe.text(try FailSafe.lines()).write(to: dir.appendingPathComponent("in.ndjson"))
        for c in Self.cases {
            let common = "export in.ndjson --out \"p\(c.shell)\" --format csv --trust-anchor '\(FailSafe.apple)'"
            let (s0, e0) = try run(common + " --part-records 5 --as-of 2024-01-01", in: dir)
            #expect(s0 == 0, "\(e0)")
            let manifest = try #require(
                read(Array(dir.path.utf8) + Array("/p".utf8) + c.bytes + Array("/manifest.json".utf8)))
            #expect(!manifest.isEmpty)
            let (s1, e1) = try run(common + " --resume", in: dir)
            #expect(s1 == 2 && e1.contains("--as-of") && e1.contains("p\(c.text)"), "\(e1)")
            let (s2, e2) = try run(common + " --resume --as-of 2024-01-01T00:00:00Z", in: dir)
            #expect(s2 == 0 && e2.contains("already complete"), "\(e2)")
        }
    }

    @Test func commandsThatNameFilesByTextRefuseAPathThatIsNotUTF8() throws {
        let dir = try FailSafe.temporaryDirectory("rawpath-generate")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in Self.cases {
            let (status, err) = try run("generate --count 2 --out \"g\(c.shell).ndjson\" --quiet", in: dir)
            #expect(status == 2 && err.contains("g\(c.text).ndjson") && err.contains("not UTF-8"), "\(err)")
            #expect(names(Array(dir.path.utf8)).isEmpty, "\(c.text)")
        }
    }
}
