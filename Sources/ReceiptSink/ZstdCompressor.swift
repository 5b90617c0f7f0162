import CZstd

/// One reusable zstd compression context (one per sink), compressing each page body as one complete frame.
///
/// Each call may ask for a faster match search (`targetLength`): on page bodies that are mostly literals
/// (hashes, random ids, timestamps) zstd level 1 spends most of its time looking for matches it does not find,
/// while the Huffman-coded literals give all the gain. See `SinkOptions.zstdTargetLengths`.
final class ZstdCompressor {
    private let cctx: OpaquePointer
    let level: Int32
    /// Whether this libzstd accepts `ZSTD_c_literalCompressionMode` (an experimental parameter); without it a
    /// faster search would also stop compressing literals, so `targetLength` is then ignored.
    private let literalModeSupported: Bool
    /// The `targetLength` currently set on `cctx` (0: the level's own).
    private var currentTargetLength: Int32 = 0
    /// Output of the last `compress` call; capacity kept between calls.
    private var output = ByteBuffer()
    /// Scratch for assembling a page body before it is compressed, shared by the sink's column writers (they
    /// run on one thread, one page at a time).
    var page = ByteBuffer()

    init(level: Int32 = 3) throws(SinkError) {
        guard let c = ZSTD_createCCtx() else {
            throw SinkError("cannot create a zstd compression context (out of memory?)")
        }
        cctx = c
        self.level = level
        let setLevel = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)
        if ZSTD_isError(setLevel) != 0 {
            ZSTD_freeCCtx(c)
            throw SinkError("zstd rejects compression level \(level): \(String(cString: ZSTD_getErrorName(setLevel)))")
        }
        let bounds = ZSTD_cParam_getBounds(Self.literalCompressionMode)
        literalModeSupported = ZSTD_isError(bounds.error) == 0 && bounds.upperBound >= Self.literalsEnabled
    }

    /// `ZSTD_c_literalCompressionMode`, an experimental parameter: zstd.h names it only in
    /// its experimental section, so it is set here through its stable slot `ZSTD_c_experimentalParam5` with the
    /// stable `ZSTD_CCtx_setParameter`, after `ZSTD_cParam_getBounds` says this libzstd takes it. A compression
    /// parameter only steers the encoder's choices: whatever a later libzstd makes of it, the frames stay valid.
    private static let literalCompressionMode = ZSTD_c_experimentalParam5
    /// Its values (`ZSTD_paramSwitch_e`, also experimental): ZSTD_ps_auto and ZSTD_ps_enable.
    private static let literalsAuto: Int32 = 0
    private static let literalsEnabled: Int32 = 1

    deinit { ZSTD_freeCCtx(cctx) }

    /// The frame written by the last `compress` call.
    var compressed: UnsafeRawBufferPointer { output.bytes }

    /// Compresses `input` into `compressed` (replacing it) and returns the compressed size. `targetLength` 0 is
    /// the level's own search; larger values skip further ahead where no match is found (faster, mostly larger).
    func compress(_ input: UnsafeRawBufferPointer, targetLength: Int32 = 0) throws(SinkError) -> Int {
        try setTargetLength(literalModeSupported ? targetLength : 0)
        let bound = ZSTD_compressBound(input.count)
        output.removeAll()
        output.reserve(bound)
        let n = ZSTD_compress2(cctx, output.base, bound, input.baseAddress, input.count)
        if ZSTD_isError(n) != 0 {
            throw SinkError("zstd compression failed: \(String(cString: ZSTD_getErrorName(n)))")
        }
        output.count = n  // n <= bound: zstd writes at most the capacity it was given
        return n
    }

    /// Sets the search's target length, and keeps literals Huffman-coded when it is not the level's own (zstd
    /// stops compressing literals by default once the fast strategy is given a target length).
    private func setTargetLength(_ t: Int32) throws(SinkError) {
        guard t != currentTargetLength else { return }
        let literalMode = t == 0 ? Self.literalsAuto : Self.literalsEnabled
        for (p, v) in [(ZSTD_c_targetLength, t), (Self.literalCompressionMode, literalMode)] {
            let r = ZSTD_CCtx_setParameter(cctx, p, v)
            if ZSTD_isError(r) != 0 {
                throw SinkError("zstd rejects a page parameter: \(String(cString: ZSTD_getErrorName(r)))")
            }
        }
        currentTargetLength = t
    }
}
