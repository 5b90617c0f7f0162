import CZstd

/// Streams the decompressed bytes of a zstd source (any number of concatenated frames, skippable frames
/// included) through libzstd's streaming API, straight into the caller's buffer.
public final class ZstdByteSource: ByteSource {
    private let inner: any ByteSource
    private let name: String
    private let stream: OpaquePointer
    private let input: UnsafeMutableRawBufferPointer
    private var inputCount = 0
    private var inputPos = 0
    private var inputEnded = false
    /// True between the first byte of a frame and its end: the stream may not end there.
    private var midFrame = false

    public init(_ inner: any ByteSource, name: String) throws(InputError) {
        guard let ds = ZSTD_createDStream() else { throw InputError("out of memory creating a zstd stream") }
        ZSTD_initDStream(ds)
        stream = ds
        self.inner = inner
        self.name = name
        // Larger than ZSTD_DStreamInSize() so that files are read in few system calls.
        input = .allocate(byteCount: max(ZSTD_DStreamInSize(), 1 << 20), alignment: 16)
    }

    deinit {
        ZSTD_freeDStream(stream)
        input.deallocate()
    }

    public var bytesConsumed: Int { inner.bytesConsumed }
    public var knownSize: Int? { inner.knownSize }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard let dst = buffer.baseAddress, buffer.count > 0 else { return 0 }
        var out = ZSTD_outBuffer(dst: dst, size: buffer.count, pos: 0)
        while true {
            // Called even with no new input: libzstd may hold decoded bytes that did not fit last time.
            var inb = ZSTD_inBuffer(src: input.baseAddress, size: inputCount, pos: inputPos)
            let outBefore = out.pos
            let r = ZSTD_decompressStream(stream, &out, &inb)
            if ZSTD_isError(r) != 0 {
                let why = String(cString: ZSTD_getErrorName(r))
                throw InputError("input '\(name)' is not a valid zstd stream (\(why)); check that the file is complete")
            }
            // A call without progress returns a hint for the next frame header, which says nothing about this one.
            if inb.pos > inputPos || out.pos > outBefore { midFrame = r != 0 }
            inputPos = inb.pos
            if out.pos > 0 { return out.pos }
            if inputPos < inputCount { continue }
            if inputEnded {
                if midFrame {
                    throw InputError("input '\(name)' ends in the middle of a zstd frame; the file is truncated")
                }
                return 0
            }
            inputCount = try inner.read(into: input)
            inputPos = 0
            if inputCount == 0 { inputEnded = true }
        }
    }
}
