import ReceiptModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens inputs by name and detects compression from content (the zstd and gzip magics), not from the extension.
/// Each input is opened once: detection peeks at the open stream and replays what it read, so pipes, FIFOs and
/// `/dev/stdin` work like files.
public enum InputOpener {
    /// Opens `path` (`-` for standard input), decompressing transparently when it starts with a zstd frame or a
    /// gzip member.
    public static func open(_ path: String) throws(InputError) -> any ByteSource {
        let file = try FileByteSource(path: path)
        var head: [UInt8] = []
        var one: UInt8 = 0
        // Peek up to 4 bytes, one read each: a pipe may deliver them one at a time, and 4 calls are nothing.
        while head.count < 4 {
            let n = try withUnsafeMutableBytes(of: &one) { (p) throws(InputError) -> Int in try file.read(into: p) }
            if n == 0 { break }
            head.append(one)
        }
        let replay = PrefixedByteSource(prefix: head, inner: file)
        let name = path == "-" ? "standard input" : path
        if isZstd(head) { return try ZstdByteSource(replay, name: name) }
        if isGzip(head) { return try GzipByteSource(replay, name: name) }
        return replay
    }

    /// Checks that `path` exists and is readable without opening it (a FIFO opened and closed unread would
    /// lose its writer, and a run may name thousands of files); returns its size when it is a regular file.
    public static func probe(_ path: String) throws(InputError) -> Int? {
        var st = stat()
        if path == "-" {
            return fstat(0, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : nil
        }
        let found = RawPath.withFileSystemPath(path) { stat($0, &st) == 0 && access($0, R_OK) == 0 }
        guard found else {
            throw InputError(.cannotOpen, input: path, reason: String(cString: strerror(errno)))
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: throw InputError(.isDirectory, input: path)
        case S_IFREG: return Int(st.st_size)
        default: return nil
        }
    }

    /// True for the gzip member magic `1F 8B`.
    public static func isGzip(_ head: [UInt8]) -> Bool { head.count >= 2 && head[0] == 0x1F && head[1] == 0x8B }

    /// True for the zstd frame magic `28 B5 2F FD` and for skippable frames (`5?` `2A 4D 18`), little-endian.
    public static func isZstd(_ head: [UInt8]) -> Bool {
        guard head.count >= 4 else { return false }
        if head[0] == 0x28 && head[1] == 0xB5 && head[2] == 0x2F && head[3] == 0xFD { return true }
        return head[0] & 0xF0 == 0x50 && head[1] == 0x2A && head[2] == 0x4D && head[3] == 0x18
    }
}
