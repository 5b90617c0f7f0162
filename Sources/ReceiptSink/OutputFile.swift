#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file written under a temporary name in its final directory and renamed into place by `commit()`, so that
/// readers see it complete or not at all. `discard()` removes it. Small writes are buffered.
///
/// A file created with a `CommitUnit` is synced at `commit()` but keeps its temporary name: the unit renames it
/// with the run's other files.
final class OutputFile {
    let path: String
    let name: String
    let tempPath: String
    private let unit: CommitUnit?
    private var fd: Int32
    /// Bytes written so far (buffered ones included): the absolute offset of the next byte.
    private(set) var offset: Int64 = 0
    private var buffer: [UInt8] = []
    private let bufferLimit = 1 << 20

    /// Creates `directory/name` as a hidden temporary file beside its final name (`.name.<pid>.tmp`).
    init(directory: String, name: String, unit: CommitUnit? = nil) throws(SinkError) {
        self.name = name
        self.unit = unit
        path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        tempPath = (directory.hasSuffix("/") ? directory : directory + "/") + ".\(name).\(getpid()).tmp"
        try ProtectedFiles.check(tempPath)
        try ProtectedFiles.check(path)
        fd = open(tempPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 { throw SinkError.system(.create, tempPath) }
        buffer.reserveCapacity(bufferLimit)
    }

    deinit {
        if fd >= 0 { discard() }
    }

    /// Appends bytes (buffered; large writes go straight to the file).
    func write(_ bytes: UnsafeRawBufferPointer) throws(SinkError) {
        offset += Int64(bytes.count)
        if buffer.count + bytes.count <= bufferLimit {
            buffer.append(contentsOf: bytes)
            return
        }
        try flush()
        if bytes.count >= bufferLimit {
            try writeAll(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    func write(_ bytes: [UInt8]) throws(SinkError) {
        var err: SinkError? = nil
        bytes.withUnsafeBytes { p in
            do throws(SinkError) { try write(p) } catch { err = error }
        }
        if let err { throw err }
    }

    /// Writes the first `count` bytes of `bytes`.
    func write(_ bytes: [UInt8], count: Int) throws(SinkError) {
        var err: SinkError? = nil
        bytes.withUnsafeBytes { p in
            do throws(SinkError) { try write(UnsafeRawBufferPointer(rebasing: p[0..<count])) } catch { err = error }
        }
        if let err { throw err }
    }

    func flush() throws(SinkError) {
        if buffer.isEmpty { return }
        var err: SinkError? = nil
        buffer.withUnsafeBytes { p in
            do throws(SinkError) { try writeAll(p) } catch { err = error }
        }
        buffer.removeAll(keepingCapacity: true)
        if let err { throw err }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SinkError) {
        var done = 0
        while done < bytes.count {
            let n = posixWrite(fd, bytes.baseAddress! + done, bytes.count - done)  // done < count: in range
            if n < 0 {
                if errno == EINTR { continue }
                throw SinkError.system(.write, tempPath)
            }
            done += n
        }
        startWriteback(count: bytes.count)
    }

    /// Bytes handed to the kernel so far (`offset` counts buffered ones too).
    private var written: Int64 = 0

    /// Asks the kernel to start writing the bytes just written to disk, without waiting, so that `commit`'s fsync
    /// finds little left to wait for. On Linux `POSIX_FADV_DONTNEED` starts writeback of the range's dirty pages
    /// (`WB_SYNC_NONE`, as `sync_file_range(SYNC_FILE_RANGE_WRITE)`, which Swift's Glibc module does not offer)
    /// and drops the range's clean pages from the cache (the exporter does not read its outputs back; a reader
    /// that does, such as a resumed run reading its manifest, gets them from disk). On the 2-core VM the two
    /// fsyncs at the end of the bench corpus's Parquet export took 4.2-6.2 ms, and 0.6-4.3 ms with this (strace).
    /// Advice only: a failure changes nothing.
    private func startWriteback(count: Int) {
        let start = written
        written += Int64(count)
        #if os(Linux)
            _ = posix_fadvise(fd, off_t(start), off_t(count), POSIX_FADV_DONTNEED)
        #endif
    }

    /// Flushes, syncs and renames the file to its final name (or, in a unit, hands it to the unit).
    func commit() throws(SinkError) {
        do throws(SinkError) {
            try flush()
            if fsync(fd) != 0 && errno != EINVAL { throw SinkError.system(.sync, tempPath) }
            if close(fd) != 0 {
                fd = -1
                throw SinkError.system(.close, tempPath)
            }
            fd = -1
            if let unit {
                unit.add(temp: tempPath, name: name)
                return
            }
            try ProtectedFiles.check(path)
            if rename(tempPath, path) != 0 { throw SinkError.system(.rename(to: path), tempPath) }
        } catch {
            discard()
            throw error
        }
    }

    /// Closes and removes the temporary file; the final name is never touched.
    func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        unlink(tempPath)
    }
}
