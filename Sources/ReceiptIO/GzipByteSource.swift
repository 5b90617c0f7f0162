import CZlib

/// Decompresses a gzip stream (RFC 1952) read from another source, with zlib's inflate.
///
/// A file of several concatenated members (what `cat a.gz b.gz` and parallel compressors write) decodes as the
/// concatenation of their contents, as `gzip -d` does. Memory is bounded: inflate writes only into the caller's
/// buffer and keeps its 32 KB window. Anything after the last member that is not another member is an error.
///
/// Not thread-safe: one reader thread owns it.
final class GzipByteSource: ByteSource {
    private let inner: any ByteSource
    private let name: String
    /// Heap-allocated: zlib's state points back to the stream and checks that it has not moved.
    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutableRawBufferPointer
    private var innerEnded = false
    private var memberEnded = false
    private var finished = false

    init(_ inner: any ByteSource, name: String) throws(InputError) {
        self.inner = inner
        self.name = name
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(byteCount: 64 << 10, alignment: 16)
        // 15 + 16: a 32 KB window, gzip header and trailer only.
        let rc = inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else {
            stream.deallocate()
            input.deallocate()
            throw InputError(.decoderUnavailable, input: name, compression: .gzip, reason: "zlib error \(rc)")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    var bytesConsumed: Int { inner.bytesConsumed }
    var knownSize: Int? { inner.knownSize }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0, !finished else { return 0 }
        while true {
            if stream.pointee.avail_in == 0 && !innerEnded { try refill() }
            if memberEnded {
                // Another member follows, or the stream ends here.
                if stream.pointee.avail_in == 0 {
                    finished = true
                    return 0
                }
                guard stream.pointee.next_in.pointee == 0x1F else {
                    throw InputError(.trailingData, input: name, compression: .gzip)
                }
                inflateReset(stream)
                memberEnded = false
            }
            stream.pointee.next_out = base.assumingMemoryBound(to: UInt8.self)
            stream.pointee.avail_out = UInt32(min(buffer.count, Int(UInt32.max)))
            let rc = inflate(stream, Z_NO_FLUSH)
            let produced = buffer.count - Int(stream.pointee.avail_out)
            switch rc {
            case Z_STREAM_END:
                memberEnded = true
            case Z_OK:
                break
            case Z_BUF_ERROR where innerEnded && stream.pointee.avail_in == 0:
                throw InputError(.truncated, input: name, compression: .gzip)
            case Z_BUF_ERROR:
                break
            default:
                let why = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(rc)"
                throw InputError(.corrupt, input: name, compression: .gzip, reason: why)
            }
            if produced > 0 { return produced }
            if stream.pointee.avail_in == 0 && innerEnded && !memberEnded {
                throw InputError(.truncated, input: name, compression: .gzip)
            }
        }
    }

    private func refill() throws(InputError) {
        let n = try inner.read(into: input)
        if n == 0 {
            innerEnded = true
            return
        }
        stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_in = UInt32(n)
    }
}
