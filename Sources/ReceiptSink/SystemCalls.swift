/// The few libc calls the sinks make, kept in one place.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `memcmp` on raw pointers (named so call sites read clearly).
@inline(__always)
func memcmpBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Int32 {
    memcmp(a, b, n)
}

/// Unsigned lexicographic byte order, the order Parquet defines for BYTE_ARRAY statistics: -1, 0 or 1.
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n >= 8 {
        // The first 8 bytes as big-endian words decide most comparisons without a call (hashes, ids); a word loop
        // over the rest measured slower than memcmp, because it kept the function from being inlined.
        // In range: both hold at least n >= 8 bytes.
        let x = a.baseAddress!.loadUnaligned(as: UInt64.self).bigEndian
        let y = b.baseAddress!.loadUnaligned(as: UInt64.self).bigEndian
        if x != y { return x < y ? -1 : 1 }
    }
    if n > 0 {
        let c = memcmp(a.baseAddress!, b.baseAddress!, n)  // both hold at least n bytes
        if c != 0 { return c < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// `malloc`, 16-aligned (the alignment malloc gives on the 64-bit platforms we build for); out of memory traps,
/// as Swift's own allocation does.
func mallocBytes(_ n: Int) -> UnsafeMutableRawPointer {
    guard let p = malloc(max(n, 1)) else { fatalError("out of memory allocating \(n) bytes") }
    precondition(Int(bitPattern: p) & 15 == 0, "malloc returned a block that is not 16-aligned")
    return p
}

/// `realloc` of a block from `mallocBytes`, with the same guarantees.
func reallocBytes(_ p: UnsafeMutableRawPointer, _ n: Int) -> UnsafeMutableRawPointer {
    guard let q = realloc(p, max(n, 1)) else { fatalError("out of memory growing a buffer to \(n) bytes") }
    precondition(Int(bitPattern: q) & 15 == 0, "realloc returned a block that is not 16-aligned")
    return q
}

/// `free` of a block from `mallocBytes` or `reallocBytes`.
func freeBytes(_ p: UnsafeMutableRawPointer) { free(p) }

/// `write(2)`, named apart from the methods called `write`.
@inline(__always)
func posixWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    write(fd, p, n)
}

/// `fsync` of a directory, so that renames into it survive a power loss, not only a crash of the process.
/// File systems that cannot sync a directory (EINVAL) are accepted as they are.
public func syncDirectory(_ path: String) throws(SinkError) {
    let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if fd < 0 { throw SinkError.system(.openFolder, path) }
    defer { close(fd) }
    if fsync(fd) != 0 && errno != EINVAL { throw SinkError.system(.syncFolder, path) }
}

/// Replaces `directory/name` with `bytes` durably: a temporary file beside it is written, synced and renamed,
/// then the folder is synced. Readers see the old content or the new one, never a mix, whatever the crash.
public func replaceFileDurably(directory: String, name: String, bytes: [UInt8]) throws(SinkError) {
    let file = try OutputFile(directory: directory, name: name)
    try file.write(bytes)
    try file.commit()
    try syncDirectory(directory)
}
