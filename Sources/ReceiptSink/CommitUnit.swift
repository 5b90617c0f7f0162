import ReceiptModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files of one run, written under temporary names and made visible together by `commit`, with
/// `summary.json` renamed last as the commit marker: a folder whose `summary.json` is present holds one complete
/// run, and the files beside it are that run's.
///
/// Files join the unit when an `OutputFile` created with it commits (it is synced and closed but keeps its
/// temporary name) or through `stage(name:bytes:)`. Any number of tables can join. Until `commit`, nothing under
/// a final name changes, so a run that fails or is killed before it leaves the folder as it was (`discard`
/// removes the temporary files; a killed run's are removed by the next run, `OutputFolder.removeTemporaries`).
public final class CommitUnit: @unchecked Sendable {
    public let directory: String
    /// The commit marker, renamed last.
    public static let marker = "summary.json"
    private let lock = Lock()
    /// Guarded by `lock`: files are added from the threads that finish the tables.
    private var staged: [(temp: String, name: String)] = []

    public init(directory: String) { self.directory = directory }

    /// Final names of the files staged so far.
    public var stagedNames: [String] { lock.withLock { staged.map(\.name) } }

    /// Records a synced temporary file (in `directory`) to be renamed to `name` at commit.
    func add(temp: String, name: String) { lock.withLock { staged.append((temp, name)) } }

    /// Writes `bytes` under a temporary name in the folder, synced, to become `name` at commit.
    public func stage(name: String, bytes: [UInt8]) throws(SinkError) {
        let file = try OutputFile(directory: directory, name: name, unit: self)
        try file.write(bytes)
        try file.commit()
    }

    /// Makes the staged files visible: the old marker is removed, every other staged file is renamed into
    /// place, the files of an earlier run named by `removing` (relative paths; folders are emptied of our part
    /// files and removed) are deleted, and the marker is renamed last. The folder is synced between steps, so
    /// that after a crash the marker is either absent or stands beside this run's complete files.
    public func commit(removing stale: [String] = []) throws(SinkError) {
        let files = lock.withLock { staged }
        guard let marker = files.first(where: { $0.name == Self.marker }) else {
            throw SinkError(.internalError, detail: "nothing staged as \(Self.marker)")
        }
        do throws(SinkError) {
            try syncDirectory(directory)
            try OutputFolder.removeFile(join(directory, Self.marker))
            try syncDirectory(directory)
            for f in files { try ProtectedFiles.check(join(directory, f.name)) }
            for f in files where f.name != Self.marker {
                if rename(f.temp, join(directory, f.name)) != 0 {
                    throw SinkError.system(.rename(to: join(directory, f.name)), f.temp)
                }
            }
            let names = Set(files.map(\.name))
            for path in stale where !names.contains(path) { try OutputFolder.remove(path, in: directory) }
            try syncDirectory(directory)
            if rename(marker.temp, join(directory, Self.marker)) != 0 {
                throw SinkError.system(.rename(to: join(directory, Self.marker)), marker.temp)
            }
            try syncDirectory(directory)
        } catch {
            discard()
            throw error
        }
        lock.withLock { staged.removeAll() }
    }

    /// Removes every staged temporary file; final names are never touched.
    public func discard() {
        for f in lock.withLock({ staged }) { unlink(f.temp) }
        lock.withLock { staged.removeAll() }
    }
}
