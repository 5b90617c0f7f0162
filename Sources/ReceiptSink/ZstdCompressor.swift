import CZstd

/// One reusable zstd compression context (one per sink), compressing each page body as one complete frame at the
/// sink's level, through libzstd's stable API only.
final class ZstdCompressor {
    private let cctx: OpaquePointer
    let level: Int32
    /// Output of the last `compress` call; capacity kept between calls.
    private var output = ByteBuffer()
    /// Scratch for assembling a page body before it is compressed, shared by the sink's column writers (they
    /// run on one thread, one page at a time).
    var page = ByteBuffer()

    init(level: Int32 = 3) throws(SinkError) {
        guard let c = ZSTD_createCCtx() else {
            throw SinkError(.compressorUnavailable)
        }
        cctx = c
        self.level = level
        let setLevel = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)
        if ZSTD_isError(setLevel) != 0 {
            ZSTD_freeCCtx(c)
            throw SinkError(
                .compressionLevelRejected, reason: String(cString: ZSTD_getErrorName(setLevel)), value: "\(level)")
        }
    }

    deinit { ZSTD_freeCCtx(cctx) }

    /// The frame written by the last `compress` call.
    var compressed: UnsafeRawBufferPointer { output.bytes }

    /// Compresses `input` into `compressed` (replacing it) and returns the compressed size.
    func compress(_ input: UnsafeRawBufferPointer) throws(SinkError) -> Int {
        let bound = ZSTD_compressBound(input.count)
        output.removeAll()
        output.reserve(bound)
        let n = ZSTD_compress2(cctx, output.base, bound, input.baseAddress, input.count)
        if ZSTD_isError(n) != 0 {
            throw SinkError(.compressionFailed, reason: String(cString: ZSTD_getErrorName(n)))
        }
        output.count = n  // n <= bound: zstd writes at most the capacity it was given
        return n
    }
}
