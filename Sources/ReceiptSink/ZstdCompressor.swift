import CZstd

/// One reusable zstd compression context (one per sink), compressing each page body as one complete frame.
final class ZstdCompressor {
    private let cctx: OpaquePointer
    let level: Int32
    /// Output of the last `compress` call; capacity kept between calls.
    private(set) var output: [UInt8] = []

    init(level: Int32 = 3) throws(SinkError) {
        guard let c = ZSTD_createCCtx() else {
            throw SinkError("cannot create a zstd compression context (out of memory?)")
        }
        cctx = c
        self.level = level
    }

    deinit { ZSTD_freeCCtx(cctx) }

    /// Compresses `input` into `output` (replacing its contents) and returns the compressed size.
    func compress(_ input: [UInt8]) throws(SinkError) -> Int {
        let bound = ZSTD_compressBound(input.count)
        if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
        let n = input.withUnsafeBytes { src in
            output.withUnsafeMutableBytes { dst in
                ZSTD_compressCCtx(cctx, dst.baseAddress, dst.count, src.baseAddress, src.count, level)
            }
        }
        if ZSTD_isError(n) != 0 {
            throw SinkError("zstd compression failed: \(String(cString: ZSTD_getErrorName(n)))")
        }
        return n
    }
}
