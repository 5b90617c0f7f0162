import Foundation
import ReceiptModel
import ReceiptSink

/// One committed part as `manifest.log` records it: the part, the resume point after it and the run's totals at
/// that commit. One compact JSON line per entry.
public struct PartLogEntry: Codable, Sendable, Equatable {
    public var part: PartEntry
    public var resume: ResumePoint
    public var elapsedSeconds: Double
    public var chainCacheHits: Int
    public var chainCacheMisses: Int

    public init(part: PartEntry, of manifest: PartManifest) {
        self.part = part
        resume = manifest.resume
        elapsedSeconds = manifest.elapsedSeconds
        chainCacheHits = manifest.chainCacheHits
        chainCacheMisses = manifest.chainCacheMisses
    }

    enum CodingKeys: String, CodingKey {
        case part, resume
        case elapsedSeconds = "elapsed_seconds"
        case chainCacheHits = "chain_cache_hits"
        case chainCacheMisses = "chain_cache_misses"
    }

    /// Applies the entry to `manifest` (whose last part must be the one before it).
    func apply(to manifest: inout PartManifest) {
        manifest.parts.append(part)
        manifest.resume = resume
        manifest.elapsedSeconds = elapsedSeconds
        manifest.chainCacheHits = chainCacheHits
        manifest.chainCacheMisses = chainCacheMisses
    }
}

/// The durable record of a parts run: `manifest.json`, written whole now and then, and `manifest.log`, to which
/// each committed part appends one line. A commit costs one appended line and one sync, whatever the number of
/// parts before it; the log is folded into `manifest.json` (compaction) once it holds as many parts as the
/// manifest, so the bytes written over a run grow linearly with its parts.
///
/// After a crash the log may end in a torn line (no newline, or not JSON): `PartManifest.load` ignores it (that
/// part was not committed), and the next `rewrite` removes it.
public final class ManifestStore {
    public static let logName = "manifest.log"
    /// The log is never compacted below this many entries: small runs write `manifest.json` only at the start,
    /// at the end and every 64 parts.
    public static let minimumCompaction = 64

    public let directory: String
    /// Parts in `manifest.json` as last written whole, and entries appended to the log since.
    private var partsInBase = 0
    private var entriesInLog = 0
    private var log: Int32 = -1
    /// Bytes written to `manifest.json` and `manifest.log` by this store, and whole rewrites of `manifest.json`:
    /// what a commit costs, for the tests.
    public private(set) var bytesWritten = 0
    public private(set) var rewrites = 0

    public init(directory: String) { self.directory = directory }

    deinit { closeLog() }

    /// Writes `manifest` whole (durably) and empties the log.
    public func rewrite(_ manifest: PartManifest) throws(SinkError) {
        let bytes: [UInt8]
        do throws(ManifestError) {
            bytes = try manifest.encoded()
        } catch {
            throw SinkError(.cannotRender, path: PartManifest.fileName, detail: error.message)
        }
        try replaceFileDurably(directory: directory, name: PartManifest.fileName, bytes: bytes)
        bytesWritten += bytes.count
        rewrites += 1
        partsInBase = manifest.parts.count
        try truncateLog()
        entriesInLog = 0
    }

    /// Records the part `manifest` just gained (its last) durably: one log line, or a whole rewrite when the
    /// log has grown as long as the manifest.
    public func commit(_ manifest: PartManifest) throws(SinkError) {
        guard let part = manifest.parts.last else { return }
        if entriesInLog + 1 >= max(Self.minimumCompaction, partsInBase) {
            return try rewrite(manifest)
        }
        let entry = PartLogEntry(part: part, of: manifest)
        var line: [UInt8]
        do {
            line = try JSONDocumentEncoder.encode(entry).rendered(layout: .compact, sortingKeys: true)
        } catch {
            throw SinkError(.cannotRender, path: Self.logName, detail: "\(error)")
        }
        line.append(UInt8(ascii: "\n"))
        try append(line)
        entriesInLog += 1
    }

    /// Closes the log; it is removed when the run is complete (`manifest.json` then holds every part).
    public func finish(removingLog: Bool) {
        closeLog()
        if removingLog { unlink(path) }
    }

    private var path: String { joinPath(directory, Self.logName) }

    private func openLog() throws(SinkError) -> Int32 {
        if log >= 0 { return log }
        if let input = ProtectedFiles.input(at: path) { throw SinkError(.inputInTheWay, path: path, value: input) }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { throw SinkError.system(.create, path) }
        log = fd
        // A log created now must survive a crash as a name, not only as data.
        try syncDirectory(directory)
        return fd
    }

    private func closeLog() {
        if log >= 0 { close(log) }
        log = -1
    }

    private func truncateLog() throws(SinkError) {
        let fd = try openLog()
        if ftruncate(fd, 0) != 0 || fsync(fd) != 0 { throw SinkError.system(.write, path) }
    }

    private func append(_ bytes: [UInt8]) throws(SinkError) {
        let fd = try openLog()
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { throw SinkError.system(.write, path) }
            done += n
        }
        if fsync(fd) != 0 { throw SinkError.system(.sync, path) }
        bytesWritten += bytes.count
    }

    /// The entries of `directory/manifest.log` that extend `manifest` (entries it already holds, left by a crash
    /// during compaction, are skipped). A last line without its newline or that is not an entry is a torn write
    /// and ignored; a damaged line before the last, or parts out of order, make the manifest unreadable.
    static func replay(_ directory: String, onto manifest: inout PartManifest) throws(ManifestError) {
        let path = joinPath(directory, logName)
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return }
        let bytes = [UInt8](data)
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        // The text after the last newline is an unfinished append; with a final newline it is empty.
        lines.removeLast()
        let decoder = JSONDecoder()
        for (k, line) in lines.enumerated() {
            guard let entry = try? decoder.decode(PartLogEntry.self, from: Data(line)) else {
                if k == lines.count - 1 { return }
                throw ManifestError(.unreadable, path: path, value: "line \(k + 1) is not a part entry")
            }
            let last = manifest.parts.last?.index ?? -1
            if entry.part.index <= last { continue }
            guard entry.part.index == last + 1 else {
                throw ManifestError(
                    .unreadable, path: path, value: "line \(k + 1) lists part \(entry.part.index) after part \(last)")
            }
            entry.apply(to: &manifest)
        }
    }
}

/// `directory/name`, without doubling a trailing slash.
func joinPath(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
}
