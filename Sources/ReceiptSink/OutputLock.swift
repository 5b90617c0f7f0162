#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on an output folder, held while a run writes it: one writer per `--out`, in every mode.
///
/// The folder itself is locked (`flock` on its descriptor), so no lock file is left behind. The kernel drops the
/// lock when the process dies, `kill -9` included.
public final class OutputLock {
    public let directory: String
    private var fd: Int32

    /// Takes the lock, waiting only (up to 2 s) while no other process holds it; fails naming the process that does.
    public init(directory: String) throws(SinkError) {
        self.directory = directory
        fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw SinkError.system(.openOutputFolder, directory) }
        // A lock this process released can stay held for a moment by a child forked meanwhile (its copy of the
        // descriptor closes only at exec), so a lock whose holder is not another process is retried briefly.
        var holder: Int? = nil
        var waited = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            holder = Self.holder(of: fd)
            guard holder == nil, waited < 200 else { break }
            usleep(10_000)
            waited += 1
        }
        if holder != nil || waited >= 200 {
            close(fd)
            fd = -1
            throw SinkError(.folderClaimed, path: directory, value: holder.map(String.init))
        }
    }

    deinit { release() }

    /// Drops the lock (also done when the lock is freed).
    public func release() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    /// The pid of the process holding a `flock` on the file `fd` refers to, from `/proc/locks` (Linux).
    private static func holder(of fd: Int32) -> Int? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let locks = open("/proc/locks", O_RDONLY | O_CLOEXEC)
        guard locks >= 0 else { return nil }
        defer { close(locks) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(locks, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        let inode = ":\(st.st_ino)"
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5].hasSuffix(inode) else { continue }
            if let pid = Int(fields[4]), pid != Int(getpid()) { return pid }
        }
        return nil
    }
}
