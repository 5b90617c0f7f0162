#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What receiptflow keeps in an output folder, to tell an earlier run's files from anything else and to clean up
/// after a run that was killed. Files that are not ours are never touched.
public enum OutputFolder {
    /// Table names, written as `NAME.<ext>` by a plain run and as a folder `NAME/part-NNNNN.<ext>` by a parts run.
    public static let tables = [
        "receipts", "transactions", "renewals", "purchases", "subscriptions", "events", "daily",
    ]
    /// Files of a run beside the tables (the manifest's log of a parts run; the report's aggregates and page:
    /// `receiptflow report`; the history state a later run continues from, `HistoryStateFormat.fileName`).
    public static let runFiles = [
        "summary.json", "manifest.json", "manifest.log", "report-data.json", "report.html", historyState,
    ]
    /// The history state a run that writes history keeps (hidden: it is no table).
    public static let historyState = ".receiptflow-state"
    static let extensions = ["parquet", "csv", "ndjson"]
    /// The spill folder of a plain run's purchase history, followed by its pid.
    static let historySpillPrefix = ".receiptflow-history-"

    /// The single-file tables a plain run in `format` writes.
    public static func tableFiles(_ format: OutputFormat) -> [String] {
        let tables = format == .ndjson ? ["receipts"] : ["receipts", "transactions", "renewals"]
        return tables.map { "\($0).\(format.fileExtension)" }
    }

    /// Relative paths of an earlier run's files in `directory`: tables of any format, table folders holding
    /// parts, the summary and the manifest. Empty when the folder is missing or holds none.
    public static func earlierRun(in directory: String) -> [String] {
        let names = Set(list(directory))
        var found: [String] = []
        for t in tables {
            for e in extensions where names.contains("\(t).\(e)") { found.append("\(t).\(e)") }
            if names.contains(t), isDirectory(join(directory, t)), list(join(directory, t)).contains(where: isPart) {
                found.append(t)
            }
        }
        for f in runFiles where names.contains(f) { found.append(f) }
        return found
    }

    /// Removes our temporary files that a killed run left (`.NAME.<pid>.tmp` beside a table or run file,
    /// `.summary.json.tmp-<pid>`, and `.part-*.tmp` in the table folders). Call it holding the `OutputLock`:
    /// then no live run owns them. Returns the removed paths.
    @discardableResult
    public static func removeTemporaries(in directory: String) throws(SinkError) -> [String] {
        var removed: [String] = []
        let ours = tables.flatMap { t in extensions.map { "\(t).\($0)" } } + runFiles
        for name in list(directory) where name.hasPrefix(".") {
            let stale =
                (name.hasSuffix(".tmp") && ours.contains { name.hasPrefix(".\($0).") })
                || name.hasPrefix(".summary.json.tmp-")
            if stale {
                try removeFile(join(directory, name))
                removed.append(name)
            } else if name.hasPrefix(historySpillPrefix), isDirectory(join(directory, name)) {
                // A plain run's purchase-history spill (`.receiptflow-history-<pid>`); a parts run's committed
                // spill (`.receiptflow-history`, no pid) is kept for `--resume`.
                try removeTree(join(directory, name))
                removed.append(name)
            }
        }
        for t in tables {
            let dir = join(directory, t)
            for name in list(dir)
            where name.hasPrefix(".part-") && name.hasSuffix(".tmp") {
                try removeFile(join(dir, name))
                removed.append(t + "/" + name)
            }
        }
        return removed
    }

    /// Removes `relative` in `directory`: a file, or a table folder emptied of our part files (then removed when
    /// nothing else is left in it).
    public static func remove(_ relative: String, in directory: String) throws(SinkError) {
        let path = join(directory, relative)
        guard isDirectory(path) else { return try removeFile(path) }
        for name in list(path)
        where name.hasPrefix("part-") || (name.hasPrefix(".part-") && name.hasSuffix(".tmp")) {
            try removeFile(join(path, name))
        }
        if rmdir(path) != 0 && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT {
            throw SinkError.system(.removeFolder, path)
        }
    }

    /// A committed part file's name (`part-00000.csv`).
    static func isPart(_ name: String) -> Bool { name.hasPrefix("part-") }

    /// `unlink`, with a missing file accepted.
    static func removeFile(_ path: String) throws(SinkError) {
        try ProtectedFiles.check(path)
        if unlink(path) != 0 && errno != ENOENT { throw SinkError.system(.remove, path) }
    }

    /// The names in `directory` (`.` and `..` excluded); empty when it cannot be read.
    static func list(_ directory: String) -> [String] {
        guard let d = opendir(directory) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `path` and everything under it (our own spill folders only; symbolic links are removed, not
    /// followed).
    static func removeTree(_ path: String) throws(SinkError) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            for name in list(path) { try removeTree(join(path, name)) }
            if rmdir(path) != 0 && errno != ENOENT { throw SinkError.system(.removeFolder, path) }
        } else {
            try removeFile(path)
        }
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }
}
