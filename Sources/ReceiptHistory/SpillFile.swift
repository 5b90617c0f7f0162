#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An append-only spill file with a write buffer. A short write (ENOSPC, EDQUOT) becomes a `HistoryError`
/// that names the full disk.
///
/// The file is open only while a full buffer is written: a store appends to one file per partition, and holding
/// them all open would cost a descriptor each for the whole run (64 or more, beyond a `ulimit -n` of 64 with the
/// rest of the run). One `open` per buffer of 64 KB or more costs nothing next to the write.
final class SpillAppender {
    let path: String
    private var buffer: [UInt8] = []
    private let limit: Int
    private(set) var bytesWritten: Int64 = 0

    /// Creates the file (empty when it is new; appended to when it exists).
    init(path: String, bufferBytes: Int = 64 << 10) throws(HistoryError) {
        self.path = path
        limit = bufferBytes
        let fd = try Self.open(path)
        Glibc.close(fd)
    }

    private static func open(_ path: String) throws(HistoryError) -> Int32 {
        while true {
            let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            if fd >= 0 { return fd }
            if errno != EINTR { throw HistoryError.system("cannot create the history spill file", path) }
        }
    }

    func append(_ bytes: [UInt8]) throws(HistoryError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= limit { try flush() }
    }

    func flush() throws(HistoryError) {
        guard !buffer.isEmpty else { return }
        let fd = try Self.open(path)
        var done = 0
        let count = buffer.count
        var failure: Int32 = 0
        buffer.withUnsafeBytes { p in
            while done < count {
                let n = write(fd, p.baseAddress! + done, count - done)  // done < count: in range
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                done += n
            }
        }
        // A file system may report a failed write only when the file is closed (NFS).
        if Glibc.close(fd) != 0 && failure == 0 && errno != EINTR { failure = errno }
        bytesWritten += Int64(count)
        buffer.removeAll(keepingCapacity: true)
        if failure != 0 {
            errno = failure
            throw HistoryError.system("cannot write the history spill", path)
        }
    }

    /// Flushes and, when asked, syncs (a part's spill must survive a crash once the part is committed).
    func close(sync: Bool) throws(HistoryError) {
        try flush()
        guard sync else { return }
        let fd = try Self.open(path)
        defer { Glibc.close(fd) }
        if fsync(fd) != 0 && errno != EINVAL { throw HistoryError.system("cannot sync", path) }
    }
}

/// Reads a spill file record by record through a buffer, refilled at record boundaries.
final class SpillScanner<R: SpillRecord> {
    let path: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var end = 0
    private var eof = false

    init(path: String, bufferBytes: Int = 64 << 10) throws(HistoryError) {
        self.path = path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw HistoryError.system("cannot open the history spill", path) }
        buffer = [UInt8](repeating: 0, count: bufferBytes)
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// The next record, or nil at the end of the file.
    func next() throws(HistoryError) -> R? {
        while true {
            if start < end {
                // A record is framed by its length (u32) so a partial one is detected before decoding.
                if end - start >= 4 {
                    let n = buffer.withUnsafeBytes {
                        Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
                    }
                    if end - start >= 4 + n {
                        let record: Result<R, HistoryError> = buffer.withUnsafeBytes { p in
                            var r = SpillReader(UnsafeRawBufferPointer(rebasing: p[(start + 4)..<(start + 4 + n)]))
                            do throws(HistoryError) { return .success(try R.decode(&r)) } catch {
                                return .failure(error)
                            }
                        }
                        start += 4 + n
                        return try record.get()
                    }
                    if 4 + n > buffer.count { buffer += [UInt8](repeating: 0, count: 4 + n - buffer.count) }
                }
            }
            if eof {
                if start < end { throw HistoryError(.spillDamaged, path: path, detail: "it ends inside a record") }
                return nil
            }
            try refill()
        }
    }

    private func refill() throws(HistoryError) {
        if start > 0 {
            let live = end - start
            if live > 0 {
                buffer.withUnsafeMutableBytes { p in
                    p.baseAddress!.advanced(by: 0).copyMemory(from: p.baseAddress! + start, byteCount: live)
                }
            }
            start = 0
            end = live
        }
        let room = buffer.count - end
        let n = buffer.withUnsafeMutableBytes { p in read(fd, p.baseAddress! + end, room) }
        if n < 0 {
            if errno == EINTR { return }
            throw HistoryError.system("cannot read the history spill", path)
        }
        if n == 0 { eof = true }
        end += n
    }
}

/// Appends `record` framed by its length.
func appendFramed<R: SpillRecord>(_ record: R, into w: inout SpillWriter) {
    let at = w.bytes.count
    w.i32(0)
    record.encode(into: &w)
    let n = UInt32(w.bytes.count - at - 4).littleEndian
    withUnsafeBytes(of: n) { p in
        for i in 0..<4 { w.bytes[at + i] = p[i] }
    }
}
