import CSIMD
import CZstd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Streams the decompressed bytes of a zstd source (any number of concatenated frames, skippable frames
/// included), straight into the caller's buffer.
///
/// Two ways to decode a frame:
/// - streaming (`ZSTD_decompressStream`): libzstd decodes into its own window buffer and copies into the caller's.
///   Works for any frame and any destination size; the only way unless in-place decoding is enabled.
/// - in place (libzstd's block API, `ZSTD_decompressBlock`, with the frame and block headers and the checksum read
///   here): blocks are decoded straight into the caller's buffer, which saves the copy. libzstd then reads
///   back-references from the caller's earlier output, so the caller must keep its promises (see
///   `directWindowLimit`). `RecordReader` enables it; every other caller gets streaming.
///   The block API rather than the buffer-less frame API (`ZSTD_decompressContinue`): libzstd 1.5 decodes a block's
///   literals into the free room after the block when it may (one-shot decoding), but the buffer-less API never
///   lets it, so blocks with more than 64 KB of literals went through a memmove and a copy of them (9% of the
///   reader thread on the benchmark corpus).
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

    /// Room every read must offer while in-place decoding is enabled: one whole block, the most a block can
    /// decode to (`ZSTD_BLOCKSIZE_MAX`); libzstd cannot stop a block half-way.
    static let directRoom = 128 << 10

    /// Frames whose window is at most this many bytes are decoded in place; 0 (the default) disables it.
    /// Set with `enableInPlace(windowLimit:)`.
    ///
    /// Whoever enables it promises, for every `read` from then on:
    /// 1. the destination offers at least `directRoom` bytes;
    /// 2. the output of earlier reads is neither moved, overwritten nor freed while it may still be referenced:
    ///    libzstd keeps the current contiguous run of output (the "segment", extended by a read whose destination
    ///    starts where the last one ended) and the one run before it;
    /// 3. a new segment is started only when `needsLongerSegment` is false, so that the run libzstd keeps covers
    ///    the frame's whole window (or the whole frame so far).
    /// Frames with a larger window, skippable frames, frames with a dictionary and anything that is not a valid
    /// frame header take the streaming path, which also reports their errors exactly as before.
    private(set) var directWindowLimit = 0

    /// Turns in-place decoding on for frames with windows up to `windowLimit` bytes, before the first read (the
    /// path is chosen at each frame's start).
    func enableInPlace(windowLimit: Int) {
        precondition(inputCount == 0 && !inputEnded && path == .between, "in-place decoding enabled after a read")
        directWindowLimit = windowLimit
    }

    /// Where the source is: between frames (the next one chooses its path), or inside a frame of either path.
    private enum FramePath { case between, streaming, direct }
    private var path = FramePath.between
    /// The buffer-less decoder; created for the first in-place frame.
    private var dctx: OpaquePointer? = nil
    /// In-place frames: the frame's window, its bytes decoded so far, the length of the current segment and the
    /// byte after it (where the next read continues the segment).
    private var window = 0
    private var blockSizeMax = 0
    /// The content size the header declares; UInt64.max (ZSTD_CONTENTSIZE_UNKNOWN) when it declares none.
    private var contentSize = UInt64.max
    private var frameDecoded = 0
    private var segmentLength = 0
    private var segmentEnd: UnsafeMutableRawPointer? = nil
    /// In-place frames: whether the frame ends with a content checksum, its XXH64 so far, and whether its last
    /// block has been decoded (only the checksum, if any, is left).
    private var checksummed = false
    private var checksum = rf_xxh64_state()
    private var lastBlockDone = false
    /// The error that stopped the source; every later read throws it again. libzstd's state is not trusted after an
    /// error, and in-place decoding must not resume over memory the reader may no longer keep.
    private var failure: InputError? = nil
    /// Frames that took the in-place path so far (tests check that it is taken).
    private(set) var framesInPlace = 0
    /// libzstd disagrees with itself about a compressed block of size 0, which no encoder writes and the format
    /// does not allow (a compressed block holds at least a literals header): its block-by-block decoder passes over
    /// it, its one-pass decoder (which `ZSTD_decompressStream` takes for a frame with a declared size that lies whole
    /// in its input) calls it corrupt. The in-place path passes over it, as it did through the buffer-less API;
    /// the tests and the fuzz target set this to check that such a block is the only reason two reads differ.
    var emptyCompressedBlocksAreCorrupt = false

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
        if let dctx { ZSTD_freeDCtx(dctx) }
        input.deallocate()
    }

    public var bytesConsumed: Int { inner.bytesConsumed }
    public var knownSize: Int? { inner.knownSize }

    /// True while an in-place frame's current segment is shorter than its window and does not reach back to the
    /// frame's start: the next read must continue the segment (not start a new one elsewhere).
    var needsLongerSegment: Bool {
        path == .direct && segmentLength < window && segmentLength < frameDecoded
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        if let failure { throw failure }
        do throws(InputError) {
            return try readNext(into: buffer)
        } catch {
            failure = error
            throw error
        }
    }

    private func readNext(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard let dst = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            switch path {
            case .between:
                guard try startFrame() else { return 0 }
            case .streaming:
                let n = try readStreaming(dst, buffer.count)
                // Otherwise the frame ended without output: the next one chooses its path.
                if n > 0 || path == .streaming { return n }
            case .direct:
                precondition(buffer.count >= Self.directRoom, "in-place zstd decoding needs room for a whole block")
                let n = try readDirect(dst, buffer.count)
                if n > 0 { return n }
            }
        }
    }

    // MARK: - Streaming

    private func readStreaming(_ dst: UnsafeMutableRawPointer, _ count: Int) throws(InputError) -> Int {
        var out = ZSTD_outBuffer(dst: dst, size: count, pos: 0)
        while true {
            // Called even with no new input: libzstd may hold decoded bytes that did not fit last time.
            var inb = ZSTD_inBuffer(src: input.baseAddress, size: inputCount, pos: inputPos)
            let outBefore = out.pos
            let r = ZSTD_decompressStream(stream, &out, &inb)
            if ZSTD_isError(r) != 0 { throw invalid(r) }
            // A call without progress returns a hint for the next frame header, which says nothing about this one.
            let progress = inb.pos > inputPos || out.pos > outBefore
            if progress { midFrame = r != 0 }
            inputPos = inb.pos
            frameDecoded += out.pos - outBefore
            if UInt64(frameDecoded) > contentSize { throw corrupt() }
            if progress && r == 0 {
                // The frame is decoded and flushed. libzstd checks its declared size only when it decodes a frame
                // in one pass, not block by block (input arriving in pieces): check it here, as in place.
                if contentSize != UInt64.max && UInt64(frameDecoded) != contentSize { throw corrupt() }
                // The next frame chooses its path.
                path = .between
                return out.pos
            }
            if out.pos > 0 { return out.pos }
            if inputPos < inputCount { continue }
            if inputEnded {
                if midFrame { throw truncated() }
                return 0
            }
            inputCount = try inner.read(into: input)
            inputPos = 0
            if inputCount == 0 { inputEnded = true }
        }
    }

    // MARK: - In place

    /// Chooses the path of the frame that starts at `inputPos` from its header; false at the clean end of the input.
    private func startFrame() throws(InputError) -> Bool {
        // ZSTD_FRAMEHEADERSIZE_MAX: the longest frame header.
        let available = try fillInput(atLeast: 18)
        if available == 0 { return false }
        var header = ZSTD_frameHeader()
        // In range: available bytes from inputPos lie in the input buffer.
        let r = ZSTD_getFrameHeader(&header, input.baseAddress! + inputPos, available)
        // Both paths check the declared content size (skippable frames and unreadable headers declare none).
        let declares = r == 0 && header.frameType == ZSTD_frame
        contentSize = declares ? header.frameContentSize : UInt64.max
        frameDecoded = 0
        guard declares, directWindowLimit > 0, header.dictID == 0,
            header.windowSize <= UInt64(directWindowLimit), Int(header.blockSizeMax) <= Self.directRoom
        else {
            // Anything else, errors included, goes the way it always went.
            path = .streaming
            return true
        }
        if dctx == nil {
            guard let d = ZSTD_createDCtx() else { throw InputError("out of memory creating a zstd stream") }
            dctx = d
        }
        let b = ZSTD_decompressBegin(dctx)
        if ZSTD_isError(b) != 0 { throw invalid(b) }
        // The blocks follow the header (ZSTD_getFrameHeader returned 0: all of it is in the buffer).
        inputPos += Int(header.headerSize)
        checksummed = header.checksumFlag != 0
        rf_xxh64_reset(&checksum)
        lastBlockDone = false
        window = Int(header.windowSize)
        blockSizeMax = Int(header.blockSizeMax)
        segmentLength = 0
        segmentEnd = nil
        path = .direct
        framesInPlace += 1
        return true
    }

    /// Decodes at most one block of the current in-place frame into `dst` (then its checksum, at the end); 0 when
    /// the frame ended without more output.
    private func readDirect(_ dst: UnsafeMutableRawPointer, _ count: Int) throws(InputError) -> Int {
        while true {
            if lastBlockDone {
                if checksummed {
                    guard try fillInput(atLeast: 4) >= 4 else { throw truncated() }
                    // In range: 4 bytes at inputPos (fillInput). The low 32 bits of XXH64, little-endian.
                    let stored = input.loadUnaligned(fromByteOffset: inputPos, as: UInt32.self).littleEndian
                    inputPos += 4
                    if stored != UInt32(truncatingIfNeeded: rf_xxh64_digest(&checksum)) {
                        throw invalid(-Int(ZSTD_error_checksum_wrong.rawValue))
                    }
                }
                // The block API checks no declared size; the streaming path makes the same check.
                if contentSize != UInt64.max && UInt64(frameDecoded) != contentSize { throw corrupt() }
                path = .between
                return 0
            }
            // Block header: 3 bytes, little-endian: last-block flag, type (2 bits), size (21 bits).
            guard try fillInput(atLeast: 3) >= 3 else { throw truncated() }
            // In range: 3 bytes at inputPos.
            let h =
                UInt32(input[inputPos]) | UInt32(input[inputPos + 1]) << 8 | UInt32(input[inputPos + 2]) << 16
            inputPos += 3
            let type = (h >> 1) & 3
            let size = Int(h >> 3)
            // Every block, whatever its type, holds at most the frame's block maximum (at most 128 KB, which
            // `directRoom` and so `count` cover); a raw or compressed block's body is read whole into the input
            // buffer (1 MB).
            guard type != 3, size <= blockSizeMax, size <= count else { throw corrupt() }
            // A raw or RLE block says how much it decodes to: beyond the declared content size it is corrupt
            // before its bytes arrive, as libzstd's streaming decoder finds (it has no room for them).
            if type != 2 && contentSize != UInt64.max && UInt64(frameDecoded + size) > contentSize {
                throw corrupt()
            }
            let body = type == 1 ? 1 : size
            guard try fillInput(atLeast: body) >= body else { throw truncated() }
            if dst != segmentEnd {
                // A new segment: the old one becomes libzstd's only history, so it must cover the window
                // (the reader's promise 3; breaking it would decode wrong bytes, so it is checked here).
                precondition(!needsLongerSegment, "zstd history shorter than the window")
                segmentLength = 0
            }
            let src = input.baseAddress! + inputPos
            let r: Int
            switch type {
            case _ where size == 0 && !(type == 2 && emptyCompressedBlocksAreCorrupt):
                // An empty block of any type: libzstd's block-by-block frame decoder passes over it without decoding
                // anything (a compressed block of size 0 included), and so does this one.
                r = 0
            case 0:
                // Raw: the bytes themselves. In range: size bytes at src (fillInput) and size <= count at dst.
                dst.copyMemory(from: src, byteCount: size)
                ZSTD_insertBlock(dctx, dst, size)
                r = size
            case 1:
                // RLE: one byte, repeated size times (size <= count).
                memset(dst, Int32(src.load(as: UInt8.self)), size)
                ZSTD_insertBlock(dctx, dst, size)
                r = size
            default:
                // The whole room, so that libzstd may decode the literals after the block instead of copying
                // them. libzstd writes only inside [dst, dst + count), the batch's free room; a block that
                // decodes to more than the frame's block maximum is corrupt (the frame API would have refused it).
                r = ZSTD_decompressBlock(dctx, dst, count, src, size)
                if ZSTD_isError(r) != 0 { throw invalid(r) }
                if r > blockSizeMax { throw corrupt() }
            }
            inputPos += body
            lastBlockDone = h & 1 == 1
            if checksummed { rf_xxh64_update(&checksum, dst.assumingMemoryBound(to: UInt8.self), r) }
            segmentEnd = dst + r
            segmentLength += r
            frameDecoded += r
            if UInt64(frameDecoded) > contentSize { throw corrupt() }
            if r > 0 { return r }
        }
    }

    private func truncated() -> InputError {
        InputError("input '\(name)' ends in the middle of a zstd frame; the file is truncated")
    }

    /// Makes at least `count` unread input bytes contiguous at `inputPos` (fewer only at the end of the input);
    /// returns how many there are.
    private func fillInput(atLeast count: Int) throws(InputError) -> Int {
        if inputCount - inputPos >= count { return inputCount - inputPos }
        if inputPos > 0 {
            // In range: both ranges lie inside the input buffer; memmove allows the overlap.
            memmove(input.baseAddress!, input.baseAddress! + inputPos, inputCount - inputPos)
            inputCount -= inputPos
            inputPos = 0
        }
        while inputCount < count && !inputEnded {
            let n = try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: input[inputCount...]))
            if n == 0 { inputEnded = true } else { inputCount += n }
        }
        return inputCount
    }

    /// The error libzstd reports for corrupt data, for checks made here.
    private func corrupt() -> InputError {
        let why = String(cString: ZSTD_getErrorString(ZSTD_error_corruption_detected))
        return InputError("input '\(name)' is not a valid zstd stream (\(why)); check that the file is complete")
    }

    private func invalid(_ code: Int) -> InputError {
        let why = String(cString: ZSTD_getErrorName(code))
        // A window beyond libzstd's default limit (128 MB, e.g. `zstd --long=31`) is a complete, valid file that
        // this reader refuses to keep that much history for: say so instead of suggesting truncation.
        if ZSTD_getErrorCode(code) == ZSTD_error_frameParameter_windowTooLarge {
            return InputError(
                "input '\(name)' was compressed with a zstd window larger than 128 MB (\(why)), more memory than "
                    + "receiptflow keeps per input; recompress it without --long=28 or more, e.g. "
                    + "`zstd -dc FILE | zstd -19 -o FILE2.zst`")
        }
        return InputError("input '\(name)' is not a valid zstd stream (\(why)); check that the file is complete")
    }
}
