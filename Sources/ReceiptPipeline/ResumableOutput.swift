import Foundation
import ReceiptHistory
import ReceiptModel
import ReceiptSink
import ReceiptVerify

/// Told by the writer stage where each written batch ends in the input, so that output can be committed in
/// parts that a resumed run continues from.
public protocol BatchCheckpoint: AnyObject {
    /// Called on the writer thread right after `batch` went to the sink, in input order. `end` is where the
    /// batch ends: every line up to it has been written (or counted as blank).
    func batchWritten(_ counts: BatchCounts, end: InputPosition) throws(SinkError)
    /// Whether the next `batchWritten` commits a part (the batch just written filled it): the writer first waits
    /// until every earlier stage is done with the batches of that part.
    var commitsPart: Bool { get }
}

/// The output of a resumable run: a `BatchSink` that writes the tables as folders of parts and a
/// `BatchCheckpoint` that cuts a part at the first batch boundary after `partRecords` rows, commits it
/// (`PartWriter`) and only then records it in `manifest.json`.
///
/// `abort()` (failure, SIGINT) discards the part in progress; committed parts and the manifest stay, and
/// `--resume` continues from the manifest's resume point.
public final class ResumableOutput: BatchSink, BatchCheckpoint {
    public let directory: String
    /// The manifest as last written.
    public private(set) var manifest: PartManifest
    /// Where the manifest is written: whole, or one log line per committed part.
    public let store: ManifestStore
    private let writer: PartWriter
    private let cache: ChainCache?
    private let started = ContinuousClock.now
    private let earlierSeconds: Double
    private let earlierHits: Int
    private let earlierMisses: Int
    private let resumedFrom: ResumePoint
    /// The history stage, whose spill is sealed with each committed part.
    public var history: HistoryCollector? = nil
    /// Writes the history tables once the last part is committed, before the manifest is marked complete.
    public var finishHistory: (() throws(HistoryError) -> HistorySummary)? = nil
    /// Held until the run finishes or aborts: a second run into the folder cannot take it.
    private var lock: OutputLock?

    // The part in progress.
    private var partCounts = BatchCounts()
    private var partStart: InputPosition
    /// End of the last written batch; never moves back (a resumed run first re-reads lines it skips).
    private var position: InputPosition
    // Byte accounting of the source being read: bytes this attempt read from it, and the bytes the whole run
    // has counted for it (the resume point's share included).
    private var bytesSource = -1
    private var attemptBytes = 0
    private var runBytes = 0

    /// Opens the output for a run described by `manifest`: a new one (no parts) or one loaded to resume.
    ///
    /// Removes `summary.json` (its presence means a complete run), writes the manifest with one more attempt,
    /// then deletes temporary files and part files the manifest does not list (left by a crash between a
    /// part's rename and the manifest update, or by an earlier run into this directory). Takes the folder's
    /// `OutputLock` unless the caller passes the one it holds.
    public init(
        directory: String, manifest: PartManifest, metadata: RunMetadata, options: SinkOptions = SinkOptions(),
        cache: ChainCache?, lock: OutputLock? = nil
    ) throws(SinkError) {
        guard let format = OutputFormat(rawValue: manifest.identity.format) else {
            throw SinkError(.unknownFormat, value: manifest.identity.format)
        }
        self.directory = directory
        self.cache = cache
        store = ManifestStore(directory: directory)
        var m = manifest
        m.complete = false
        m.attempts += 1
        self.manifest = m
        earlierSeconds = m.elapsedSeconds
        earlierHits = m.chainCacheHits
        earlierMisses = m.chainCacheMisses
        resumedFrom = m.resume
        position = m.resume.position
        partStart = m.resume.position
        writer = try PartWriter(
            format: format, directory: directory, metadata: metadata, options: options,
            firstPart: (m.parts.last?.index ?? -1) + 1)
        if let lock {
            self.lock = lock
        } else {
            self.lock = try OutputLock(directory: directory)
        }
        try Self.checkListedParts(m, directory)
        try Self.remove(joinPath(directory, "summary.json"))
        try store.rewrite(m)
        try Self.removeUnlisted(m, directory, format)
    }

    deinit { unlock() }

    private func unlock() {
        lock?.release()
        lock = nil
    }

    /// Whether `directory` holds a part file the manifest lists as committed but that is gone: the output was
    /// changed by hand and cannot be continued.
    private static func checkListedParts(_ m: PartManifest, _ directory: String) throws(SinkError) {
        for part in m.parts {
            for f in part.files where !FileManager.default.fileExists(atPath: joinPath(directory, f)) {
                throw SinkError(.resumeMismatch, path: joinPath(directory, f), value: directory)
            }
        }
    }

    private static func removeUnlisted(_ m: PartManifest, _ directory: String, _ format: OutputFormat)
        throws(SinkError)
    {
        let listed = Set(m.parts.flatMap(\.files))
        // Every format's folders: a run into a directory that held another format's parts leaves none behind.
        for folder in ["receipts", "transactions", "renewals"] {
            let dir = joinPath(directory, folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
                let ours = name.hasPrefix("part-") || (name.hasPrefix(".part-") && name.hasSuffix(".tmp"))
                if ours && !listed.contains(folder + "/" + name) { try remove(joinPath(dir, name)) }
            }
        }
        try OutputFolder.removeTemporaries(in: directory)
    }

    private static func remove(_ path: String) throws(SinkError) {
        if let input = ProtectedFiles.input(at: path) { throw SinkError(.inputInTheWay, path: path, value: input) }
        if unlink(path) != 0 && errno != ENOENT { throw SinkError.system(.remove, path) }
    }

    // MARK: - BatchSink

    public func write(_ batch: ColumnBatch) throws(SinkError) {
        try writer.write(batch)
    }

    /// Commits the last part (an empty one when the run committed none, so each table has a file with its
    /// schema) and marks the manifest complete.
    public func finish() throws(SinkError) {
        if writer.hasOpenPart || manifest.parts.isEmpty { try commitPart() }
        if let finishHistory {
            do throws(HistoryError) {
                manifest.history = try finishHistory()
            } catch {
                throw SinkError(error)
            }
        }
        manifest.complete = true
        stamp()
        try store.rewrite(manifest)
        store.finish(removingLog: true)
        history?.removeSpill()
        unlock()
    }

    public func abort() {
        writer.discardPart()
        // An orderly stop leaves `manifest.json` listing every committed part (a kill leaves them in the log).
        if (try? store.rewrite(manifest)) != nil { store.finish(removingLog: true) }
        unlock()
    }

    // MARK: - BatchCheckpoint

    public func batchWritten(_ counts: BatchCounts, end: InputPosition) throws(SinkError) {
        var c = counts
        if end.source != bytesSource {
            bytesSource = end.source
            attemptBytes = 0
            runBytes = end.source == resumedFrom.position.source ? resumedFrom.sourceBytes : 0
        }
        // A resumed run re-reads its first source from the start: count only bytes beyond what was counted.
        attemptBytes += counts.inputBytes
        let total = max(runBytes, attemptBytes)
        c.inputBytes = total - runBytes
        runBytes = total
        partCounts.add(c)
        if end > position { position = end }
        if commitsPart { try commitPart() }
    }

    public var commitsPart: Bool { writer.rowsInPart >= manifest.partRecords }

    private func commitPart() throws(SinkError) {
        let index = try writer.commitPart()
        var spill: String? = nil
        if let history {
            do throws(HistoryError) {
                spill = try history.sealPart(index)
            } catch {
                throw SinkError(error)
            }
        }
        let format = writer.format
        manifest.parts.append(
            PartEntry(
                index: index, files: PartWriter.relativePaths(index, format), start: partStart, end: position,
                firstRecord: manifest.records, records: partCounts.records, transactions: partCounts.transactions,
                counts: StoredCounts(partCounts), history: spill))
        manifest.resume = ResumePoint(
            position: position, sourceBytes: position.source == bytesSource ? runBytes : resumeBytes(position))
        stamp()
        try store.commit(manifest)
        partCounts = BatchCounts()
        partStart = position
    }

    /// The counted bytes of a source this attempt has not read (only the resume point's own source).
    private func resumeBytes(_ p: InputPosition) -> Int {
        p.source == resumedFrom.position.source ? resumedFrom.sourceBytes : 0
    }

    private func stamp() {
        let e = ContinuousClock.now - started
        manifest.elapsedSeconds =
            earlierSeconds + Double(e.components.seconds) + Double(e.components.attoseconds) * 1e-18
        manifest.chainCacheHits = earlierHits + (cache?.hits ?? 0)
        manifest.chainCacheMisses = earlierMisses + (cache?.misses ?? 0)
    }
}
