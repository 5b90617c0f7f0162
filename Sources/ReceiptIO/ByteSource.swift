import ReceiptModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stream of bytes read in large chunks: a file, standard input, or a decompressor over one of them.
///
/// Not thread-safe: one reader thread owns a source.
public protocol ByteSource: AnyObject {
    /// Fills the start of `buffer` with the next bytes; returns how many (0 only at the end of the stream).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int
    /// Bytes consumed from the underlying file so far (compressed bytes for a decompressor): progress and summary.
    var bytesConsumed: Int { get }
    /// Size of the underlying file in bytes when it is a regular file, for percentages; nil for pipes and ttys.
    var knownSize: Int? { get }
}

/// A file descriptor read with `read(2)`: a path opened read-only, or standard input (never closed).
public final class FileByteSource: ByteSource {
    private let fd: Int32
    private let ownsDescriptor: Bool
    private let name: String
    public private(set) var bytesConsumed: Int = 0
    public let knownSize: Int?

    /// Opens `path` for reading; `-` means standard input.
    public init(path: String) throws(InputError) {
        name = path == "-" ? "standard input" : path
        if path == "-" {
            fd = 0
            ownsDescriptor = false
        } else {
            // The path's own bytes, also when they are not UTF-8 (`RawPath`).
            let d = RawPath.withFileSystemPath(path) { open($0, O_RDONLY | O_CLOEXEC) }
            guard d >= 0 else {
                throw InputError(.cannotOpen, input: path, reason: Self.errnoText())
            }
            fd = d
            ownsDescriptor = true
        }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
            knownSize = Int(st.st_size)
        } else if fd != 0 && fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw InputError(.isDirectory, input: path)
        } else {
            knownSize = nil
        }
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            #if canImport(Glibc)
                let n = Glibc.read(fd, base, buffer.count)
            #else
                let n = Darwin.read(fd, base, buffer.count)
            #endif
            if n >= 0 {
                bytesConsumed += n
                return n
            }
            // A signal (SIGINT is handled elsewhere, progress timers) interrupted the call: retry.
            if errno == EINTR { continue }
            throw InputError(.cannotRead, input: name, reason: Self.errnoText())
        }
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// Replays a few already-read bytes before the rest of a source: format detection peeks without losing data.
final class PrefixedByteSource: ByteSource {
    private let inner: any ByteSource
    private var prefix: [UInt8]
    private var prefixPos = 0

    init(prefix: [UInt8], inner: any ByteSource) {
        self.prefix = prefix
        self.inner = inner
    }

    /// Peeked bytes count as consumed only once they are replayed.
    var bytesConsumed: Int { inner.bytesConsumed - (prefix.count - prefixPos) }
    var knownSize: Int? { inner.knownSize }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        if prefixPos < prefix.count {
            let n = min(buffer.count, prefix.count - prefixPos)
            prefix.withUnsafeBytes { p in
                // In range: n <= prefix.count - prefixPos and n <= buffer.count.
                buffer.baseAddress!.copyMemory(from: p.baseAddress! + prefixPos, byteCount: n)
            }
            prefixPos += n
            return n
        }
        return try inner.read(into: buffer)
    }
}
