import Foundation
import ReceiptHistory
import ReceiptModel
import ReceiptPipeline
import ReceiptSink
import Testing

/// Passes batches on and fails the write of the `failAt`-th one (0-based), as a full disk would mid-run.
private final class FailingSink: BatchSink {
    let inner: BatchSink
    let failAt: Int
    private var writes = 0

    init(_ inner: BatchSink, failAt: Int) {
        self.inner = inner
        self.failAt = failAt
    }

    func write(_ batch: ColumnBatch) throws(SinkError) {
        defer { writes += 1 }
        if writes == failAt { throw SinkError(.internalError, detail: "injected failure at batch \(failAt)") }
        try inner.write(batch)
    }
    func finish() throws(SinkError) { try inner.finish() }
    func abort() { inner.abort() }
}

/// The data lines of a CSV table: the single file of a run without parts, or its part files in name order,
/// without the header each file starts with.
private func csvRows(_ dir: URL, _ table: String) throws -> [Substring] {
    let folder = dir.appendingPathComponent(table)
    var files = [dir.appendingPathComponent("\(table).csv")]
    if FileManager.default.fileExists(atPath: folder.path) {
        files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("part-") }
            .sorted().map { folder.appendingPathComponent($0) }
    }
    return try files.flatMap { try String(contentsOf: $0, encoding: .utf8).split(separator: "\n").dropFirst() }
}

@Suite(.serialized) struct ResumableOutputTests {
    let corpus = Corpus.shared

    private func config() -> PipelineConfig {
        var c = PipelineConfig()
        c.inputs = [corpus.zst.path, corpus.ndjson.path]
        c.threads = 2
        // Batches of 40 records (the byte target is above 40 records), so that parts of 100 records are committed
        // after the third batch: the failure points below are chosen against that.
        c.reader.batchBytes = 2 << 20
        c.reader.maxRecordsPerBatch = 40
        return c
    }

    private func identity(_ c: PipelineConfig) throws -> RunIdentity {
        RunIdentity(
            format: "csv", inputs: try c.inputs.map { try InputFingerprint.of($0) },
            options: RowOptions(config: c, trustAnchorsSHA256: [corpus.rootPEM.path]))
    }

    /// The reference: the same inputs through the single-file CSV sink.
    private func cleanRun() throws -> (URL, BatchCounts) {
        let dir = corpus.temporaryDirectory("resumable-clean")
        let sink = try makeSink(format: .csv, directory: dir.path, metadata: RunMetadata())
        guard case .completed(let r) = ExportPipeline(config: config(), sink: sink, cache: try corpus.cache()).run()
        else {
            throw RunDidNotComplete(description: "the clean run did not complete")
        }
        return (dir, r.counts)
    }

    /// One attempt into `dir`: fresh when there is no manifest, resumed from it otherwise.
    private func attempt(_ dir: URL, failAt: Int?) throws -> (RunOutcome, ResumableOutput) {
        var c = config()
        var manifest = try PartManifest(identity: identity(c), partRecords: 100)
        if let m = try PartManifest.load(from: dir.path) {
            manifest = m
            c.resumeAfter = m.parts.isEmpty ? nil : m.resume.position
        }
        let cache = try corpus.cache()
        let output = try ResumableOutput(directory: dir.path, manifest: manifest, metadata: RunMetadata(), cache: cache)
        let sink: BatchSink = failAt.map { FailingSink(output, failAt: $0) } ?? output
        return (ExportPipeline(config: c, sink: sink, cache: cache, checkpoint: output).run(), output)
    }

    @Test(arguments: [[0], [1], [4], [9], [15], [6, 3], [2, 0, 11], [20, 20]])
    func resumingAfterFailuresAtAnyBatchGivesTheRowsAndCountsOfACleanRun(failures: [Int]) throws {
        let (clean, cleanCounts) = try cleanRun()
        let dir = corpus.temporaryDirectory("resumable")
        var committed: [Int] = []
        for k in failures {
            let (outcome, output) = try attempt(dir, failAt: k)
            guard case .failed(let failure, _) = outcome else {
                Issue.record("attempt failing at batch \(k) did not fail: \(outcome)")
                return
            }
            #expect(failure.message.contains("injected failure"))
            #expect(!output.manifest.complete)
            committed.append(output.manifest.parts.count)
        }
        let (outcome, output) = try attempt(dir, failAt: nil)
        guard case .completed = outcome else {
            Issue.record("the last attempt did not complete: \(outcome)")
            return
        }
        #expect(committed.last ?? 0 > 0 || failures.allSatisfy { $0 < 3 })
        #expect(output.manifest.complete && output.manifest.attempts == failures.count + 1)
        for table in ["receipts", "transactions"] {
            let want = try csvRows(clean, table)
            let got = try csvRows(dir, table)
            #expect(got.count == want.count, "\(table) after failures \(failures), parts \(committed)")
            #expect(got == want, "\(table) after failures \(failures), parts \(committed)")
        }
        // Every count, bytes read and blank lines included, is that of the uninterrupted run.
        #expect(try output.manifest.totalCounts() == cleanCounts)
        #expect(output.manifest.records == corpus.truth.count * 2)
    }

    @Test(.timeLimit(.minutes(2))) func aHistoryAddThatFailsStopsThePartsRunBeforeItCommitsAPart() throws {
        let dir = corpus.temporaryDirectory("resumable-history-fails")
        let c = config()
        let cache = try corpus.cache()
        let output = try ResumableOutput(
            directory: dir.path, manifest: try PartManifest(identity: identity(c), partRecords: 100),
            metadata: RunMetadata(), cache: cache)
        // A tiny budget spills at the first occurrence, into a folder that cannot be made: a file is in its way.
        let history = HistoryCollector(directory: dir.path, inputs: c.inputs, resumable: true, memoryBudget: 1)
        #expect(FileManager.default.createFile(atPath: history.spillRoot, contents: Data("x".utf8)))
        defer { try? FileManager.default.removeItem(atPath: history.spillRoot) }
        output.history = history
        let outcome = ExportPipeline(config: c, sink: output, cache: cache, checkpoint: output, history: history).run()
        guard case .failed(.output(let error), _) = outcome else {
            Issue.record("expected an output failure, got \(outcome)")
            return
        }
        #expect(error.message.hasPrefix("cannot create the history spill folder \(history.spillRoot)/"))
        // The first batch's occurrences failed: no part may be committed without them.
        #expect(output.manifest.parts.isEmpty && !output.manifest.complete)
    }

    /// A kill during a part's commit: the part's files renamed into place, its log line cut short. The resumed
    /// run ignores the torn line, removes the part's files (no entry lists them) and writes the clean run's rows.
    @Test(arguments: [1, 30, -1])
    func aTornLastLogLineIsIgnoredAndTheResumedRunIsTheCleanOne(cut: Int) throws {
        let (clean, cleanCounts) = try cleanRun()
        let dir = corpus.temporaryDirectory("resumable-torn")
        _ = try attempt(dir, failAt: 7)
        let m = try #require(try PartManifest.load(from: dir.path))
        let last = try #require(m.parts.last)
        var next = last
        next.index += 1
        next.files = PartWriter.relativePaths(next.index, .csv)
        for (from, to) in zip(last.files, next.files) {
            try FileManager.default.copyItem(at: dir.appendingPathComponent(from), to: dir.appendingPathComponent(to))
        }
        var line = try JSONEncoder().encode(PartLogEntry(part: next, of: m))
        line = cut < 0 ? line : line.prefix(cut)
        try line.write(to: dir.appendingPathComponent(ManifestStore.logName))
        #expect(try PartManifest.load(from: dir.path) == m)
        let (outcome, output) = try attempt(dir, failAt: nil)
        guard case .completed = outcome else {
            Issue.record("the resumed attempt did not complete: \(outcome)")
            return
        }
        for table in ["receipts", "transactions"] {
            #expect(try csvRows(dir, table) == csvRows(clean, table), "\(table), cut \(cut)")
        }
        #expect(try output.manifest.totalCounts() == cleanCounts)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(ManifestStore.logName).path))
    }

    @Test func opensByRemovingTemporaryFilesUnlistedPartsAndTheOldSummary() throws {
        let dir = corpus.temporaryDirectory("resumable-clean-up")
        _ = try attempt(dir, failAt: 5)
        let m = try #require(try PartManifest.load(from: dir.path))
        let listed = Set(m.parts.flatMap(\.files))
        #expect(!listed.isEmpty)
        let fm = FileManager.default
        let strays = [
            "receipts/part-00077.csv", "transactions/part-00077.csv", "receipts/.part-00001.csv.999.tmp",
            ".manifest.json.999.tmp", ".summary.json.tmp-999", "summary.json",
        ]
        for s in strays + ["receipts/notes.txt"] {
            try #require(fm.createFile(atPath: dir.appendingPathComponent(s).path, contents: Data("x".utf8)), "\(s)")
        }
        _ = try ResumableOutput(directory: dir.path, manifest: m, metadata: RunMetadata(), cache: nil)
        for s in strays { #expect(!fm.fileExists(atPath: dir.appendingPathComponent(s).path), "\(s)") }
        for f in listed { #expect(fm.fileExists(atPath: dir.appendingPathComponent(f).path), "\(f)") }
        // Files that are not receiptflow's are left alone.
        #expect(fm.fileExists(atPath: dir.appendingPathComponent("receipts/notes.txt").path))
        #expect(try PartManifest.load(from: dir.path)?.attempts == 2)
    }

    @Test func refusesASecondWriterOfTheSameFolderUntilTheFirstIsGone() throws {
        let dir = corpus.temporaryDirectory("resumable-lock")
        let manifest = PartManifest(identity: try identity(config()), partRecords: 100)
        var first: ResumableOutput? = try ResumableOutput(
            directory: dir.path, manifest: manifest, metadata: RunMetadata(), cache: nil)
        #expect {
            _ = try ResumableOutput(directory: dir.path, manifest: manifest, metadata: RunMetadata(), cache: nil)
        } throws: {
            ($0 as? SinkError)?.message.contains("another receiptflow is writing") == true
        }
        #expect(first != nil)
        first = nil
        _ = try ResumableOutput(directory: dir.path, manifest: manifest, metadata: RunMetadata(), cache: nil)
    }

    @Test func refusesToContinueWhenAListedPartIsMissing() throws {
        let dir = corpus.temporaryDirectory("resumable-missing")
        _ = try attempt(dir, failAt: 6)
        let m = try #require(try PartManifest.load(from: dir.path))
        let gone = try #require(m.parts.first?.files.first)
        try FileManager.default.removeItem(at: dir.appendingPathComponent(gone))
        #expect {
            _ = try ResumableOutput(directory: dir.path, manifest: m, metadata: RunMetadata(), cache: nil)
        } throws: {
            ($0 as? SinkError)?.message.contains("\(gone) is listed in manifest.json but missing") == true
        }
    }

    @Test func anInputOfBlankLinesGivesOneEmptyPartPerTableAndCountsThem() throws {
        let dir = corpus.temporaryDirectory("resumable-blank")
        let input = dir.appendingPathComponent("blank.ndjson")
        try Data("\n  \n\n".utf8).write(to: input)
        var c = PipelineConfig()
        c.inputs = [input.path]
        c.verify = false
        let out = dir.appendingPathComponent("out")
        let manifest = PartManifest(
            identity: RunIdentity(
                format: "csv", inputs: [try InputFingerprint.of(input.path)],
                options: RowOptions(config: c, trustAnchorsSHA256: [])),
            partRecords: 10)
        let output = try ResumableOutput(directory: out.path, manifest: manifest, metadata: RunMetadata(), cache: nil)
        guard case .completed = ExportPipeline(config: c, sink: output, cache: nil, checkpoint: output).run() else {
            Issue.record("the run did not complete")
            return
        }
        #expect(
            output.manifest.parts.map(\.files) == [
                ["receipts/part-00000.csv", "transactions/part-00000.csv", "renewals/part-00000.csv"]
            ])
        #expect(try output.manifest.totalCounts().blankLines == 3)
        #expect(try csvRows(out, "receipts").isEmpty)
        let header = try String(contentsOf: out.appendingPathComponent("receipts/part-00000.csv"), encoding: .utf8)
        #expect(header.hasPrefix("source,line,"))
    }
}
