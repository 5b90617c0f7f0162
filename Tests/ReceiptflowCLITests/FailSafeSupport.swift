import Foundation
import ReceiptTestSupport
import Testing

/// Inputs, runs and folder snapshots for the fail-safe export tests: real receipts as NDJSON, the binary started
/// with or without waiting, and a byte-for-byte picture of an output folder.
enum FailSafe {
    static let apple = Fixtures.certsDir.appendingPathComponent("AppleIncRootCertificate.cer").path

    /// One NDJSON line per real fixture receipt, repeated `copies` times, each with its own id.
    static func lines(copies: Int = 1) throws -> [String] {
        let names = Fixtures.realReceiptNames()
        var out: [String] = []
        for c in 0..<copies {
            for (k, name) in names.enumerated() {
                let der = try Data(contentsOf: Fixtures.realDir.appendingPathComponent(name))
                out.append(#"{"id":"r\#(c)-\#(k)","receipt-data":"\#(der.base64EncodedString())"}"#)
            }
        }
        return out
    }

    static func text(_ lines: [String]) -> Data { Data((lines.joined(separator: "\n") + "\n").utf8) }

    static func temporaryDirectory(_ tag: String) throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("rf-failsafe-\(tag)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    /// `export INPUT... --out OUT --format FORMAT` with Apple's root, two threads and no progress line.
    static func args(_ inputs: [String], _ out: URL, _ format: String = "ndjson", _ extra: [String] = []) -> [String] {
        ["export"] + inputs + [
            "--out", out.path, "--format", format, "--trust-anchor", apple, "--threads", "2", "--quiet",
        ]
            + extra
    }

    /// Starts the binary without waiting; standard error is collected in the returned pipe.
    static func launch(_ args: [String], executable: URL = Fixtures.executable) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return (p, err)
    }

    /// Waits for `p` and returns its status and standard error.
    static func finish(_ p: Process, _ err: Pipe) -> (Int32, String) {
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: e, as: UTF8.self))
    }

    /// Every file under `dir` (hidden ones included) with its bytes, by relative path; folders end with `/`.
    static func snapshot(_ dir: URL) -> [String: Data] {
        var out: [String: Data] = [:]
        guard let e = FileManager.default.enumerator(atPath: dir.path) else { return out }
        while let rel = e.nextObject() as? String {
            let path = dir.appendingPathComponent(rel).path
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { continue }
            if isDir.boolValue {
                out[rel + "/"] = Data()
            } else {
                out[rel] = FileManager.default.contents(atPath: path) ?? Data("<unreadable>".utf8)
            }
        }
        return out
    }

    /// The receipts rows of an NDJSON export in `out`, as (record_id, status, error_code).
    static func rows(_ out: URL) throws -> [(id: String, status: Int, code: String?, detail: String?)] {
        let text = try Data(contentsOf: out.appendingPathComponent("receipts.ndjson"))
        return try text.split(separator: 0x0A).map { l in
            let o = try #require(try JSONSerialization.jsonObject(with: Data(l)) as? [String: Any])
            return (
                o["record_id"] as? String ?? "", o["status"] as? Int ?? -1, o["error_code"] as? String,
                o["error_detail"] as? String
            )
        }
    }

    /// `summary.json`'s record count.
    static func summaryRecords(_ out: URL) throws -> Int? {
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        let o = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (o?["records"] as? Int) ?? ((o?["counts"] as? [String: Any])?["records"] as? Int)
    }

    /// Status by record id of the plain NDJSON export of `lines`: the truth the other encodings must reproduce.
    static func reference(_ lines: [String]) throws -> [String: Int] {
        let dir = try temporaryDirectory("reference")
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("plain.ndjson")
        try text(lines).write(to: input)
        let (status, _, err) = try runTool(args([input.path], dir.appendingPathComponent("out")))
        #expect(status == 0, "\(err)")
        let rows = try rows(dir.appendingPathComponent("out"))
        #expect(rows.count == lines.count)
        return Dictionary(rows.map { ($0.id, $0.status) }, uniquingKeysWith: { a, _ in a })
    }

    /// Runs a tool with `input` on standard input (`ToolFilter.run`).
    static func filter(_ tool: String, _ args: [String], _ input: [UInt8]) throws -> [UInt8]? {
        try ToolFilter.run(tool, args, input)
    }

    /// Makes a FIFO at `path`.
    static func fifo(_ path: URL) throws {
        guard mkfifo(path.path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Names of hidden temporary files directly in `dir`.
    static func temporaries(_ dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter {
            $0.hasPrefix(".") && $0.contains(".tmp")
        }
    }

    /// Polls `condition` every 20 ms for up to `seconds`.
    static func wait(seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}
