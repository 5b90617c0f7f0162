import Foundation
import ReceiptSink

/// The check that nothing a run would create, replace or remove in its output folder is one of its inputs
/// (`ProtectedFiles`, which knows them by device and inode): a hard link, a symbolic link or another spelling of
/// an input's path is still that input.
enum InputGuard {
    /// The first input that a run writing into `directory` could create, replace or remove, with the path in
    /// the folder that is it; nil when the run touches none. The candidates are every name of receiptflow's in
    /// the folder: tables of any format, run files, temporary files, part folders and history spill folders.
    static func touchedInput(in directory: String) -> (input: String, path: String)? {
        for path in candidates(in: directory) {
            if let input = ProtectedFiles.input(at: path) { return (input, path) }
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

    private static func names(_ directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
