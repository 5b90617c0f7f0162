import Foundation
import ReceiptTestSupport
import Testing

/// Runs the built `receiptflow` with `args`, feeding `stdin` (a file) when given.
private func receiptflow(_ args: [String], stdin: URL? = nil) throws -> (status: Int32, stderr: String) {
    let p = Process()
    p.executableURL = Fixtures.executable
    p.arguments = args
    let err = Pipe()
    p.standardError = err
    p.standardOutput = FileHandle.nullDevice
    if let stdin { p.standardInput = try FileHandle(forReadingFrom: stdin) }
    try p.run()
    let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    return (p.terminationStatus, text)
}

private func lines(_ url: URL) throws -> [Substring] {
    try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
}

@Suite(.serialized)
struct ExportCommandTests {
    let corpus = Corpus.shared

    @Test func readsStandardInputLikeAFileNamingItDash() throws {
        let fromFile = corpus.temporaryDirectory("cli-file")
        let fromStdin = corpus.temporaryDirectory("cli-stdin")
        let anchor = ["--trust-anchor", corpus.rootPEM.path, "--format", "csv", "--quiet"]
        let a = try receiptflow(["export", corpus.ndjson.path, "--out", fromFile.path] + anchor)
        let b = try receiptflow(["export", "--out", fromStdin.path] + anchor, stdin: corpus.ndjson)
        #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
        let fileRows = try lines(fromFile.appendingPathComponent("receipts.csv"))
        let stdinRows = try lines(fromStdin.appendingPathComponent("receipts.csv"))
        #expect(fileRows.count == corpus.truth.count + 1)
        #expect(stdinRows.count == fileRows.count)
        let prefix = corpus.ndjson.path + ","
        for (f, s) in zip(fileRows.dropFirst(), stdinRows.dropFirst()) {
            #expect(f.hasPrefix(prefix) && s.hasPrefix("-,"))
            #expect(f.dropFirst(prefix.count) == s.dropFirst(2))
        }
        let summary =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: fromStdin.appendingPathComponent("summary.json"))) as! [String: Any]
        #expect(summary["records"] as? Int == corpus.truth.count)
        #expect(summary["inputs"] as? [String] == ["-"])
    }

    @Test func exportsSeveralInputsIncludingZstdInOneRun() throws {
        let out = corpus.temporaryDirectory("cli-multi")
        let r = try receiptflow([
            "export", corpus.zst.path, corpus.ndjson.path, "--out", out.path, "--trust-anchor", corpus.rootPEM.path,
            "--format", "csv", "--threads", "2", "--quiet",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try lines(out.appendingPathComponent("receipts.csv")).dropFirst()
        #expect(rows.count == 2 * corpus.truth.count)
        #expect(rows.first?.hasPrefix(corpus.zst.path + ",1,") == true)
        #expect(rows.last?.hasPrefix(corpus.ndjson.path + ",") == true)
        let summary =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: out.appendingPathComponent("summary.json"))) as! [String: Any]
        let valid = corpus.truth.filter { ($0["status"] as? NSNumber)?.intValue == 0 }.count
        #expect(summary["valid"] as? Int == 2 * valid)
        #expect(summary["records"] as? Int == 2 * corpus.truth.count)
    }

    @Test(arguments: [
        (["export", "in.ndjson"], "--out DIR is required"),
        (["export", "--out", "x", "--format", "xml"], "--format takes parquet, csv or ndjson"),
        (["export", "--out", "x", "--threads", "zero"], "--threads takes a whole number"),
        (["export", "--out", "x", "--environment", "staging"], "--environment takes production, sandbox or any"),
        (["export", "--out", "x", "--bogus"], "unknown option --bogus"),
        (["export", "--out", "x", "--part-records", "0"], "--part-records takes 1 to 100000000"),
    ])
    func exitsWithStatus2AndSaysWhatToDoOnUsageErrors(args: [String], message: String) throws {
        let r = try receiptflow(args)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        // The reason and where the options are, not the whole usage text.
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(r.stderr)")
        #expect(lines.last == "Run `receiptflow export --help` for the options.")
    }

    /// History built from records nobody verified says so: in summary.json and on the line after the closing line.
    @Test func aNoVerifyRunSaysItsHistoryComesFromUnverifiedRecords() throws {
        for verify in [true, false] {
            let out = corpus.temporaryDirectory("cli-unverified")
            let options = verify ? ["--trust-anchor", corpus.rootPEM.path] : ["--no-verify"]
            let run = try receiptflow(["export", corpus.ndjson.path, "--out", out.path, "--format", "csv"] + options)
            #expect(run.status == 0, "\(run.stderr)")
            let summary = try Data(contentsOf: out.appendingPathComponent("summary.json"))
            let o = try JSONSerialization.jsonObject(with: summary) as! [String: Any]
            #expect(o["history_from_unverified_records"] as? Bool == !verify)
            let note = run.stderr.split(separator: "\n").filter { $0.contains("built from unverified records") }
            #expect(note.count == (verify ? 0 : 1), "\(run.stderr)")
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("purchases.csv").path))
        }
    }

    @Test func exitsWithStatus1AndKeepsNoOutputWhenAnInputIsMissing() throws {
        let out = corpus.temporaryDirectory("cli-missing")
        let r = try receiptflow([
            "export", corpus.ndjson.path, "/nonexistent/more.ndjson", "--out", out.path, "--trust-anchor",
            corpus.rootPEM.path, "--format", "csv",
        ])
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot open input '/nonexistent/more.ndjson'"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }

    @Test func exitsWithStatus1OnAnUnreadableTrustAnchor() throws {
        let dir = corpus.temporaryDirectory("cli-anchor")
        let notACert = dir.appendingPathComponent("root.cer")
        try Data("not a certificate".utf8).write(to: notACert)
        let r = try receiptflow([
            "export", "--out", dir.appendingPathComponent("out").path,
            "--trust-anchor", notACert.path,
        ])
        #expect(r.status == 1)
        #expect(r.stderr.contains("holds no X.509 certificate"))
    }

    @Test func interruptStopsTheRunLeavesNoFilesAndExits130() throws {
        let out = corpus.temporaryDirectory("cli-sigint")
        let p = Process()
        p.executableURL = Fixtures.executable
        p.arguments = ["export", "--out", out.path, "--trust-anchor", corpus.rootPEM.path, "--format", "parquet"]
        let input = Pipe()
        let err = Pipe()
        p.standardInput = input
        p.standardError = err
        try p.run()
        // Some records, then an open pipe: the run is mid-way when the interrupt comes.
        input.fileHandleForWriting.write(try Data(contentsOf: corpus.ndjson).prefix(2_000_000))
        Thread.sleep(forTimeInterval: 1.5)
        p.interrupt()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        try? input.fileHandleForWriting.close()
        #expect(p.terminationReason == .exit && p.terminationStatus == 130, "\(text)")
        #expect(text.contains("interrupted"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }
}
