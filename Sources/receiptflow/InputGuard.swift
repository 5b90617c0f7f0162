import Foundation
import ReceiptModel
import ReceiptSink

/// The files a run reads (its inputs and trust anchors), known by device and inode rather than by name, and the
/// check that nothing the run would create, replace or remove in its output folder is one of them: a hard link,
/// a symbolic link or another spelling of an input's path is still that input.
struct InputGuard {
    /// A file as the file system knows it.
    struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// The identities of each input path: the file it leads to and, for a symbolic link, the link itself.
    private var inputs: [FileID: String] = [:]

    init(paths: [String]) {
        for path in paths where path != "-" {
            for id in [Self.id(path, follow: true), Self.id(path, follow: false)].compactMap({ $0 }) {
                inputs[id] = inputs[id] ?? path
            }
        }
    }

    /// The input that `path` (in the output folder) is, following a symbolic link or not; nil when none.
    func input(at path: String) -> String? {
        for follow in [false, true] {
            if let id = Self.id(path, follow: follow), let input = inputs[id] { return input }
        }
        return nil
    }

    /// The first input that a run writing into `directory` could create, replace or remove, with the path in
    /// the folder that is it; nil when the run touches none. The candidates are every name of receiptflow's in
    /// the folder: tables of any format, run files, temporary files, part folders and history spill folders.
    func touchedInput(in directory: String) -> (input: String, path: String)? {
        guard !inputs.isEmpty else { return nil }
        for path in Self.candidates(in: directory) {
            if let input = input(at: path) { return (input, path) }
        }
        return nil
    }

    /// Every existing path in `directory` that a run may write over, rename or remove.
    static func candidates(in directory: String) -> [String] {
        let tableNames = Set(OutputFolder.tables)
        let ours = Set(OutputFolder.tables.flatMap { t in ["parquet", "csv", "ndjson"].map { "\(t).\($0)" } })
            .union(OutputFolder.runFiles)
        var found: [String] = []
        for name in names(directory) {
            let path = join(directory, name)
            if ours.contains(name) || (name.hasPrefix(".") && (name.hasSuffix(".tmp") || name.contains(".tmp-"))) {
                found.append(path)
            } else if name.hasPrefix(".receiptflow-history") {
                found.append(contentsOf: tree(path))
            } else if tableNames.contains(name) {
                found.append(path)
                for part in names(path) where part.hasPrefix("part-") || part.hasPrefix(".part-") {
                    found.append(join(path, part))
                }
            }
        }
        return found
    }

    /// `path` and, for a folder (not followed through a link), everything under it.
    private static func tree(_ path: String) -> [String] {
        var st = stat()
        guard lstat(path, &st) == 0 else { return [] }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return [path] }
        return [path] + names(path).flatMap { tree(join(path, $0)) }
    }

    private static func id(_ path: String, follow: Bool) -> FileID? {
        var st = stat()
        let r = RawPath.withFileSystemPath(path) { follow ? stat($0, &st) : lstat($0, &st) }
        guard r == 0 else { return nil }
        return FileID(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    private static func names(_ directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
