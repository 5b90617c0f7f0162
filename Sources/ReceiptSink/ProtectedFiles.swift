import ReceiptModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files a run reads (its inputs), by device and inode, which no output call may write over, rename or
/// remove. The command checks the output folder before it writes anything; every call here that creates,
/// replaces or removes a file in the folder checks again, so that a path missed there still cannot destroy an
/// input.
public enum ProtectedFiles {
    private static let lock = Lock()
    /// Device and inode of each protected file, with its path as given.
    nonisolated(unsafe) private static var files: [FileKey: String] = [:]

    struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// Protects the files `paths` lead to (and, for a symbolic link, the link itself). Paths are text as
    /// `RawPath` gives them; `-` (standard input) is skipped.
    public static func protect(_ paths: [String]) {
        for path in paths where path != "-" {
            for follow in [true, false] {
                guard let key = key(path, follow: follow) else { continue }
                lock.withLock { files[key] = files[key] ?? path }
            }
        }
    }

    /// The protected file that `path` is (itself, or through a symbolic link); nil when none.
    public static func input(at path: String) -> String? {
        let known = lock.withLock { files }
        guard !known.isEmpty else { return nil }
        for follow in [false, true] {
            if let key = key(path, follow: follow), let input = known[key] { return input }
        }
        return nil
    }

    /// Throws when `path` is a protected file: the call about to write over or remove it must not.
    static func check(_ path: String) throws(SinkError) {
        if let input = input(at: path) { throw SinkError(.inputInTheWay, path: path, value: input) }
    }

    private static func key(_ path: String, follow: Bool) -> FileKey? {
        var st = stat()
        let r = RawPath.withFileSystemPath(path) { follow ? stat($0, &st) : lstat($0, &st) }
        guard r == 0 else { return nil }
        return FileKey(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }
}
