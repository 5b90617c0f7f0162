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
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n > 0 {
        let c = memcmp(a.baseAddress!, b.baseAddress!, n)  // both hold at least n bytes
        if c != 0 { return c < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// `write(2)`, named apart from the methods called `write`.
@inline(__always)
func posixWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    write(fd, p, n)
}
