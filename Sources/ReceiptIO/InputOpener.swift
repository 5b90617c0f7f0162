#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens inputs by name and detects compression from content (the zstd magic), not from the extension.
public enum InputOpener {
    /// Opens `path` (`-` for standard input), decompressing transparently when it starts with a zstd frame.
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
        if isZstd(head) { return try ZstdByteSource(replay, name: path == "-" ? "standard input" : path) }
        return replay
    }

    /// Checks that `path` can be opened for reading, without keeping it open (a run may name thousands of
    /// files); returns its size when it is a regular file. Standard input is not touched.
    public static func probe(_ path: String) throws(InputError) -> Int? {
        if path == "-" {
            var st = stat()
            return fstat(0, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : nil
        }
        return try FileByteSource(path: path).knownSize
    }

    /// True for the zstd frame magic `28 B5 2F FD` and for skippable frames (`5?` `2A 4D 18`), little-endian.
    public static func isZstd(_ head: [UInt8]) -> Bool {
        guard head.count >= 4 else { return false }
        if head[0] == 0x28 && head[1] == 0xB5 && head[2] == 0x2F && head[3] == 0xFD { return true }
        return head[0] & 0xF0 == 0x50 && head[1] == 0x2A && head[2] == 0x4D && head[3] == 0x18
    }
}
