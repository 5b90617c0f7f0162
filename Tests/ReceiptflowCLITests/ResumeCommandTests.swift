import Foundation
import ReceiptIO
import ReceiptTestSupport
import Synchronization
import Testing

/// Generated inputs for the resume tests, made once per test process: 3,000 records, about 20% bad ones of
/// every kind, over a zstd file and a plain NDJSON file, so that resumes land inside a compressed source and
/// at source boundaries.
final class ResumeData: @unchecked Sendable {
    static let shared: ResumeData = {
        do { return try ResumeData() } catch { fatalError("cannot generate the resume test data: \(error)") }
    }()

    let dir: URL
    let inputs: [String]
    let anchor: String
    /// The generator's truth, one entry per record, in run order (first input first).
    let truth: [(source: String, record: [String: Any])]

    init() throws {
        let tmp = FileManager.default.temporaryDirectory
        // Folders of earlier test processes that have exited: do not let runs pile up data.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? [] {
            guard name.hasPrefix("rf-resume-"), let pid = Int32(name.dropFirst("rf-resume-".count)) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: tmp.appendingPathComponent(name))
            }
        }
        dir = tmp.appendingPathComponent("rf-resume-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ca = tmp.appendingPathComponent("rf-resume-tests-ca").path
        anchor = ca + "/root.pem"
        var inputs: [String] = []
        var truth: [(String, [String: Any])] = []
        for (name, count, seed) in [("a.ndjson.zst", 1200, 31), ("b.ndjson", 1800, 32)] {
            let out = dir.appendingPathComponent(name).path
            let truthPath = dir.appendingPathComponent(name + ".truth").path
            let (status, _, err) = try runTool([
                "generate", "--count", String(count), "--seed", String(seed), "--bad-fraction", "0.2", "--out", out,
                "--truth", truthPath, "--ca-dir", ca, "--quiet",
            ])
            guard status == 0 else { throw ResumeTestError("generate failed: \(err)") }
            inputs.append(out)
            for line in try Self.decompressedText(truthPath).split(separator: "\n") {
                truth.append((out, try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]))
            }
        }
        self.inputs = inputs
        self.truth = truth
    }

    /// A file's text, decompressed when it is zstd (the truth of a compressed output is compressed too).
    static func decompressedText(_ path: String) throws -> String {
        let source = try InputOpener.open(path)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try chunk.withUnsafeMutableBytes { (p) throws(InputError) -> Int in try source.read(into: p) }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func outDir(_ tag: String) -> URL { dir.appendingPathComponent("\(tag)-\(UUID().uuidString)") }

    /// `export` of the inputs into `out` with the common options.
    func exportArgs(_ out: URL, _ format: String, _ extra: [String] = []) -> [String] {
        ["export"] + inputs + [
            "--out", out.path, "--format", format, "--trust-anchor", anchor, "--threads", "2", "--quiet",
        ] + extra
    }

    /// One uninterrupted run without parts per format, the reference for every resumed one.
    private var cleanRuns: [String: URL] = [:]
    private let lock = NSLock()

    func clean(_ format: String) throws -> URL {
        lock.lock()
        defer { lock.unlock() }
        if let done = cleanRuns[format] { return done }
        let out = outDir("clean-\(format)")
        let (status, _, err) = try runTool(exportArgs(out, format))
        guard status == 0 else { throw ResumeTestError("clean run failed: \(err)") }
        cleanRuns[format] = out
        return out
    }
}

struct ResumeTestError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// The data rows of a table: `name.<ext>` of a run without parts, or its part files in name order, without
/// the CSV header each file starts with.
private func rows(_ out: URL, _ table: String, _ format: String) throws -> [Substring] {
    let folder = out.appendingPathComponent(table)
    var files = [out.appendingPathComponent("\(table).\(format)")]
    if FileManager.default.fileExists(atPath: folder.path) {
        files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasPrefix("part-") && $0.hasSuffix("." + format)
        }.sorted().map { folder.appendingPathComponent($0) }
    }
    var all: [Substring] = []
    for f in files {
        let lines = try String(contentsOf: f, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "\(f.lastPathComponent) ends with a newline")
        all += lines.dropLast().dropFirst(format == "csv" ? 1 : 0)
    }
    return all
}

private func tables(_ format: String) -> [String] { format == "ndjson" ? ["receipts"] : ["receipts", "transactions"] }

private func json(_ url: URL) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
}

/// Files in the part folders that are not committed parts listed in the manifest (temporary files, orphans).
private func strayFiles(_ out: URL) throws -> [String] {
    let manifest = try json(out.appendingPathComponent("manifest.json"))
    let listed = Set((manifest["parts"] as! [[String: Any]]).flatMap { $0["files"] as! [String] })
    var stray: [String] = []
    for folder in ["receipts", "transactions"] {
        let dir = out.appendingPathComponent(folder)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        where !listed.contains("\(folder)/\(name)") {
            stray.append("\(folder)/\(name)")
        }
    }
    return stray + listed.filter { !FileManager.default.fileExists(atPath: out.appendingPathComponent($0).path) }
}

/// The summary counts that must not depend on how the run was split (time, threads and cache counts may).
private func counts(_ summary: [String: Any]) -> [String: String] {
    let keys = [
        "records", "receipts_written", "valid", "rejected", "transactions_written", "blank_lines", "bytes_read",
        "by_status", "by_error_code",
    ]
    var out: [String: String] = [:]
    for k in keys {
        if let d = summary[k] as? [String: Int] {
            out[k] = d.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        } else {
            out[k] = summary[k].map { "\($0)" } ?? "missing"
        }
    }
    return out
}

/// A CSV line split into fields (RFC 4180 quoting; the records of these tables hold no newline).
private func fields(_ line: Substring) -> [String] {
    var out: [String] = []
    var field = ""
    var quoted = false
    var i = line.startIndex
    while i < line.endIndex {
        let c = line[i]
        if quoted {
            if c == "\"" {
                let n = line.index(after: i)
                if n < line.endIndex && line[n] == "\"" {
                    field.append("\"")
                    i = n
                } else {
                    quoted = false
                }
            } else {
                field.append(c)
            }
        } else if c == "\"" {
            quoted = true
        } else if c == "," {
            out.append(field)
            field = ""
        } else {
            field.append(c)
        }
        i = line.index(after: i)
    }
    out.append(field)
    return out
}

/// Starts `receiptflow` without waiting for it.
private func launch(_ args: [String]) throws -> (Process, Pipe) {
    let p = Process()
    p.executableURL = Fixtures.executable
    p.arguments = args
    let err = Pipe()
    p.standardError = err
    p.standardOutput = FileHandle.nullDevice
    try p.run()
    return (p, err)
}

/// Committed part files of the receipts table (renamed into place, whether or not the manifest lists them yet).
private func partCount(_ out: URL) -> Int {
    let names =
        (try? FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("receipts").path)) ?? []
    return names.filter { $0.hasPrefix("part-") }.count
}

@Suite(.serialized)
struct ResumeCommandTests {
    let data = ResumeData.shared

    @Test func theCleanRunMatchesTheGeneratorTruth() throws {
        let out = try data.clean("csv")
        let receipts = try rows(out, "receipts", "csv")
        #expect(receipts.count == data.truth.count)
        let header = fields(
            try String(contentsOf: out.appendingPathComponent("receipts.csv"), encoding: .utf8)
                .prefix { $0 != "\n" }[...])
        let col = Dictionary(uniqueKeysWithValues: header.enumerated().map { ($1, $0) })
        var validTransactions: [String: Int] = [:]
        for (row, (source, t)) in zip(receipts, data.truth) {
            let f = fields(row)
            let line = "\(t["line"]!)"
            #expect(f[col["source"]!] == source && f[col["line"]!] == line)
            #expect(f[col["record_id"]!] == (t["id"] as? String ?? ""), "record_id at \(source):\(line)")
            #expect(f[col["status"]!] == "\(t["status"]!)", "status at \(source):\(line) (\(t["kind"]!))")
            #expect(f[col["error_code"]!] == (t["error_code"] as? String ?? ""), "error_code at \(source):\(line)")
            for c in ["bundle_id", "receipt_type", "digest_algorithm"] {
                #expect(f[col[c]!] == (t[c] as? String ?? ""), "\(c) at \(source):\(line)")
            }
            if (t["status"] as? NSNumber)?.intValue == 0 {
                validTransactions["\(source):\(line)"] = (t["transactions"] as! [Any]).count
            }
        }
        var seen: [String: Int] = [:]
        for row in try rows(out, "transactions", "csv") {
            let f = fields(row)
            seen["\(f[0]):\(f[1])", default: 0] += 1
        }
        #expect(seen == validTransactions.filter { $0.value > 0 })
    }

    /// The central resume check: SIGKILL at random points (a few milliseconds in, and shortly after a random
    /// number of further parts appeared), `--resume` each time until the run completes, then every row of both
    /// tables is compared with the clean run: same rows, same order, none missing, none twice.
    @Test(arguments: ["csv", "ndjson"])
    func resumingAfterKillsAtRandomPointsGivesTheRowsOfACleanRun(format: String) throws {
        let clean = try data.clean(format)
        let out = data.outDir("killed-\(format)")
        var rng = SystemRandomNumberGenerator()
        var points: [String] = []
        var kills = 0
        var finished = false
        let deadline = Date().addingTimeInterval(300)
        for attempt in 0..<30 where !finished {
            #expect(Date() < deadline, "the resumed runs did not finish: \(points)")
            if Date() > deadline { break }
            // As a user would: the first command again while no manifest exists (killed before it was
            // written, nothing committed), `--resume` alone once it does (the part size comes from it).
            let hasManifest = FileManager.default.fileExists(atPath: out.appendingPathComponent("manifest.json").path)
            let args = data.exportArgs(out, format, hasManifest ? ["--resume"] : ["--part-records", "300"])
            let (p, err) = try launch(args)
            if kills < 5 {
                let before = partCount(out)
                if kills == 0 {
                    // Early: before or around the first part.
                    let ms = Int.random(in: 0...40, using: &rng)
                    points.append("\(ms) ms in")
                    usleep(UInt32(ms * 1000))
                } else {
                    let target = before + Int.random(in: 1...2, using: &rng)
                    let extra = Int.random(in: 0...15, using: &rng)
                    points.append("\(extra) ms after part \(target)")
                    while p.isRunning && partCount(out) < target && Date() < deadline { usleep(1000) }
                    usleep(UInt32(extra * 1000))
                }
                if p.isRunning {
                    kill(p.processIdentifier, SIGKILL)
                }
            }
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            if p.terminationReason == .uncaughtSignal {
                #expect(p.terminationStatus == SIGKILL)
                kills += 1
            } else {
                #expect(p.terminationStatus == 0, "attempt \(attempt): \(message)")
                finished = p.terminationStatus == 0
                if !finished { break }
            }
        }
        #expect(finished, "kill points: \(points)")
        #expect(kills >= 3, "only \(kills) kills landed before the run finished: \(points)")
        for table in tables(format) {
            let want = try rows(clean, table, format)
            let got = try rows(out, table, format)
            #expect(got.count == want.count, "\(table): kill points \(points)")
            let firstDiff = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(firstDiff == nil, "\(table) differs at row \(firstDiff ?? -1): kill points \(points)")
        }
        #expect(try strayFiles(out).isEmpty)
        let manifest = try json(out.appendingPathComponent("manifest.json"))
        #expect(manifest["complete"] as? Bool == true)
        // Every attempt that got as far as writing the manifest counts (a kill may land before that).
        let attempts = manifest["attempts"] as? Int ?? 0
        #expect(attempts >= 2 && attempts <= kills + 1, "\(attempts) attempts for \(kills) kills")
        let summary = try json(out.appendingPathComponent("summary.json"))
        let cleanSummary = try json(clean.appendingPathComponent("summary.json"))
        #expect(counts(summary) == counts(cleanSummary), "kill points \(points)")
        #expect((summary["parts"] as? [String: Any])?["attempts"] as? Int == attempts)
    }

    @Test func sigintKeepsCommittedPartsAndExits130SayingResumeContinues() throws {
        let clean = try data.clean("csv")
        let out = data.outDir("sigint")
        let (p, err) = try launch(data.exportArgs(out, "csv", ["--part-records", "300"]))
        let deadline = Date().addingTimeInterval(120)
        while p.isRunning && partCount(out) < 2 && Date() < deadline { usleep(1000) }
        kill(p.processIdentifier, SIGINT)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 130, "\(message)")
        #expect(message.contains("--resume"))
        #expect(try strayFiles(out).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("summary.json").path))
        let manifest = try json(out.appendingPathComponent("manifest.json"))
        #expect(manifest["complete"] as? Bool == false)
        #expect((manifest["parts"] as? [Any])?.count ?? 0 >= 2)

        let (status, _, resumed) = try runTool(data.exportArgs(out, "csv", ["--resume"]))
        #expect(status == 0, "\(resumed)")
        for table in ["receipts", "transactions"] {
            #expect(try rows(out, table, "csv") == rows(clean, table, "csv"), "\(table)")
        }
    }

    @Test func aRunInPartsWritesTheRowsOfARunWithout() throws {
        let clean = try data.clean("csv")
        let out = data.outDir("parts")
        let (status, _, err) = try runTool(data.exportArgs(out, "csv", ["--part-records", "250"]))
        #expect(status == 0, "\(err)")
        for table in ["receipts", "transactions"] {
            #expect(try rows(out, table, "csv") == rows(clean, table, "csv"), "\(table)")
        }
        let manifest = try json(out.appendingPathComponent("manifest.json"))
        let parts = manifest["parts"] as! [[String: Any]]
        #expect(parts.count >= 6)
        // Parts are contiguous: each starts where the previous ended, and their records add up in order.
        var first = 0
        var end: [String: Any]? = nil
        for part in parts {
            #expect(part["first_record"] as? Int == first)
            first += part["records"] as! Int
            if let end { #expect(NSDictionary(dictionary: part["start"] as! [String: Any]).isEqual(to: end)) }
            end = part["end"] as? [String: Any]
            #expect((part["records"] as! Int) >= 250 || part["index"] as? Int == parts.count - 1)
        }
        #expect(first == data.truth.count)
        #expect(end?["source"] as? Int == 1)
    }

    // MARK: - Refusals

    /// A complete run into a fresh folder, to try resuming with other inputs or options.
    private func completedRun() throws -> URL {
        let out = data.outDir("refuse")
        let (status, _, err) = try runTool(data.exportArgs(out, "csv", ["--part-records", "1000"]))
        #expect(status == 0, "\(err)")
        return out
    }

    /// One completed run shared by the refusals that leave it as it is.
    private static let sharedCompletedRun = Mutex<URL?>(nil)

    private func sharedRun() throws -> URL {
        try Self.sharedCompletedRun.withLock { (run: inout URL?) throws -> URL in
            if let run { return run }
            let out = try completedRun()
            run = out
            return out
        }
    }

    @Test(arguments: [
        (["--field", "receipt_data"], "--field"),
        (["--id-field", "other"], "--id-field"),
        (["--environment", "sandbox"], "--environment"),
        (["--bundle-id", "com.example.app"], "--bundle-id"),
        (["--max-record-size", "65536"], "--max-record-size"),
        (["--no-verify"], "--no-verify"),
    ])
    func resumeRefusesOptionsThatChangeRowsWithStatus2(extra: [String], option: String) throws {
        let out = try sharedRun()
        let (status, _, err) = try runTool(data.exportArgs(out, "csv", ["--resume"] + extra))
        #expect(status == 2, "\(err)")
        #expect(err.contains(option) && err.contains("give the command that began it"), "\(err)")
    }

    /// Every option that changes output, beyond the row options above: the history's as-of time and whether it
    /// is written, the receipt policies, the device check and the trust anchors. Each is refused naming the
    /// option with both values, and the run's own command is still accepted.
    @Test(arguments: [
        (["--as-of", "2024-05-01"], "--as-of is '2024-05-01T00:00:00.000Z', the run used 'the newest"),
        (["--no-history"], "--no-history is 'given', the run used 'not given'"),
        (["--app-version", "2.0", "--app-version", "1.0"], "--app-version is 1.0 2.0, the run used none"),
        (["--device-id-field", "device"], "--device-id-field is 'device', the run used not given"),
        (
            ["--device-id-field", "device", "--require-device-match"],
            "--require-device-match is given, the run used not given"
        ),
        (["--environment", "production"], "--environment is production, the run used any"),
        (["--trust-anchor", "/tmp/rf-resume-tests-ca/foreign-root.pem"], "--trust-anchor (SHA-256) is "),
    ])
    func resumeRefusesEveryOutputOptionNamingBothValues(extra: [String], reason: String) throws {
        let out = try sharedRun()
        let before = try Data(contentsOf: out.appendingPathComponent("manifest.json"))
        let (status, _, err) = try runTool(data.exportArgs(out, "csv", ["--resume"] + extra))
        #expect(status == 2, "\(err)")
        #expect(err.contains(reason) && err.contains("give the command that began it"), "\(err)")
        #expect(try Data(contentsOf: out.appendingPathComponent("manifest.json")) == before)
        // The same value written another way (the default given explicitly) is the same option value.
        let same = try runTool(data.exportArgs(out, "csv", ["--resume", "--id-field", "id"]))
        #expect(same.0 == 0 && same.2.contains("already complete"), "\(same.2)")
    }

    @Test func aResumedRunWithTheFirstAttemptsAsOfIsAcceptedWrittenAnyWay() throws {
        let out = data.outDir("as-of")
        let first = try runTool(data.exportArgs(out, "csv", ["--part-records", "1000", "--as-of", "2024-05-01"]))
        #expect(first.0 == 0, "\(first.2)")
        for given in ["2024-05-01T00:00:00Z", "2024-05-01"] {
            let again = try runTool(data.exportArgs(out, "csv", ["--resume", "--as-of", given]))
            #expect(again.0 == 0 && again.2.contains("already complete"), "\(given): \(again.2)")
        }
        let missing = try runTool(data.exportArgs(out, "csv", ["--resume"]))
        #expect(missing.0 == 2 && missing.2.contains("--as-of is 'the newest"), "\(missing.2)")
    }

    @Test func resumeRefusesAnotherFormatOrInputListOrPartSize() throws {
        let out = try sharedRun()
        let format = try runTool(data.exportArgs(out, "ndjson", ["--resume"]))
        #expect(format.0 == 2 && format.2.contains("--format is ndjson, the run used csv"), "\(format.2)")
        var args = data.exportArgs(out, "csv", ["--resume"])
        args.remove(at: 1)  // the first input
        let inputs = try runTool(args)
        #expect(inputs.0 == 2 && inputs.2.contains("the inputs are"), "\(inputs.2)")
        let size = try runTool(data.exportArgs(out, "csv", ["--resume", "--part-records", "999"]))
        #expect(size.0 == 2 && size.2.contains("--part-records is 999"), "\(size.2)")
        // The command of the run itself is accepted: the run is complete, so there is nothing to do.
        let same = try runTool(data.exportArgs(out, "csv", ["--resume"]))
        #expect(same.0 == 0 && same.2.contains("already complete"), "\(same.2)")
    }

    @Test func resumeRefusesAnInputChangedSinceTheRunBeganWithStatus1() throws {
        let dir = data.outDir("changed-input")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("in.ndjson")
        try FileManager.default.copyItem(atPath: data.inputs[1], toPath: input.path)
        let out = dir.appendingPathComponent("out")
        let args = [
            "export", input.path, "--out", out.path, "--format", "csv", "--trust-anchor", data.anchor, "--quiet",
        ]
        #expect(try runTool(args + ["--part-records", "500"]).0 == 0)
        // Same size, same first MB, new modification time: still refused, the rows could differ.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 5)], ofItemAtPath: input.path)
        let touched = try runTool(args + ["--resume"])
        #expect(touched.0 == 1 && touched.2.contains("changed since the run began (modification time)"), "\(touched.2)")
        let handle = try FileHandle(forWritingTo: input)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"id\":\"x\",\"receipt-data\":\"AAAA\"}\n".utf8))
        try handle.close()
        let appended = try runTool(args + ["--resume"])
        #expect(appended.0 == 1 && appended.2.contains("size"), "\(appended.2)")
        #expect(appended.2.contains("remove \(out.path) and export again"))
    }

    @Test func resumeRefusesStandardInputAndAFolderWithoutAManifest() throws {
        let out = data.outDir("no-manifest")
        let stdin = try runTool(["export", "-", "--out", out.path, "--resume", "--trust-anchor", data.anchor])
        #expect(stdin.0 == 2 && stdin.2.contains("standard input cannot be resumed"), "\(stdin.2)")
        // A named pipe (as `<(zstdcat ...)` gives) is refused like standard input, before anything reads it.
        let fifo = data.outDir("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let piped = try runTool([
            "export", fifo, "--out", out.path + "-fifo", "--trust-anchor", data.anchor, "--resume", "--part-records",
            "500",
        ])
        #expect(piped.0 == 2 && piped.2.contains("is not a regular file"), "\(piped.2)")
        let nothing = try runTool(data.exportArgs(out, "csv", ["--resume"]))
        #expect(nothing.0 == 2 && nothing.2.contains("nothing to resume"), "\(nothing.2)")
        // With a part size, --resume starts the run when there is none yet (a retry loop needs one command).
        let started = try runTool(data.exportArgs(out, "csv", ["--resume", "--part-records", "1000"]))
        #expect(started.0 == 0, "\(started.2)")
        #expect(try rows(out, "receipts", "csv").count == data.truth.count)
    }

    @Test func aNewRunDoesNotOverwriteAnUnfinishedOne() throws {
        let out = try completedRun()
        // Mark the run unfinished, as a killed run leaves it.
        let url = out.appendingPathComponent("manifest.json")
        var manifest = try json(url)
        manifest["complete"] = false
        try JSONSerialization.data(withJSONObject: manifest).write(to: url)
        let again = try runTool(data.exportArgs(out, "csv", ["--part-records", "1000"]))
        #expect(again.0 == 2 && again.2.contains("add --resume to continue it"), "\(again.2)")
    }
}
