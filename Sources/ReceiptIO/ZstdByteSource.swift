import CZstd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Streams the decompressed bytes of a zstd source (any number of concatenated frames, skippable frames
/// included) into the caller's buffer, through libzstd's stable streaming API (`ZSTD_decompressStream`).
///
/// libzstd checks every frame, its content checksum included when the frame carries one. This type adds one
/// check: a frame that declares its content size must decode to exactly that many bytes (libzstd checks it only
/// when it decodes a frame in one pass, not when the input arrives in pieces).
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
    /// False between frames: the next read looks at the next frame's header first.
    private var inFrame = false
    /// The content size the current frame's header declares; nil when it declares none.
    private var contentSize: UInt64? = nil
    private var frameDecoded: UInt64 = 0
    /// The error that stopped the source; every later read throws it again (libzstd's state is not trusted after
    /// an error).
    private var failure: InputError? = nil

    public init(_ inner: any ByteSource, name: String) throws(InputError) {
        guard let ds = ZSTD_createDStream() else {
            throw InputError(.decoderUnavailable, input: name, compression: .zstd, reason: "out of memory")
        }
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
        var out = ZSTD_outBuffer(dst: dst, size: buffer.count, pos: 0)
        while true {
            if !inFrame {
                guard try startFrame() else { return 0 }
            }
            // Called even with no new input: libzstd may hold decoded bytes that did not fit last time.
            var inb = ZSTD_inBuffer(src: input.baseAddress, size: inputCount, pos: inputPos)
            let outBefore = out.pos
            let r = ZSTD_decompressStream(stream, &out, &inb)
            if ZSTD_isError(r) != 0 { throw invalid(r) }
            // A call without progress returns a hint for the next frame header, which says nothing about this one.
            let progress = inb.pos > inputPos || out.pos > outBefore
            if progress { midFrame = r != 0 }
            inputPos = inb.pos
            frameDecoded += UInt64(out.pos - outBefore)
            if let contentSize, frameDecoded > contentSize { throw corrupt() }
            if progress && r == 0 {
                // The frame is decoded and flushed.
                if let contentSize, frameDecoded != contentSize { throw corrupt() }
                inFrame = false
                if out.pos > 0 { return out.pos }
                continue
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

    /// Reads the declared content size of the frame that starts at `inputPos`; false at the clean end of the input.
    private func startFrame() throws(InputError) -> Bool {
        // ZSTD_FRAMEHEADERSIZE_MAX: the longest frame header.
        let available = try fillInput(atLeast: 18)
        if available == 0 { return false }
        // In range: available bytes from inputPos lie in the input buffer. Skippable frames declare 0; a header
        // libzstd cannot read (cut short, or not zstd) declares nothing here, and the decoder reports it.
        let declared = ZSTD_getFrameContentSize(input.baseAddress! + inputPos, available)
        contentSize =
            declared == ZSTD_CONTENTSIZE_UNKNOWN || declared == ZSTD_CONTENTSIZE_ERROR ? nil : UInt64(declared)
        frameDecoded = 0
        inFrame = true
        return true
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

    private func truncated() -> InputError {
        InputError(.truncated, input: name, compression: .zstd)
    }

    /// The error libzstd reports for corrupt data, for the declared-size check made here.
    private func corrupt() -> InputError {
        let why = String(cString: ZSTD_getErrorString(ZSTD_error_corruption_detected))
        return InputError(.corrupt, input: name, compression: .zstd, reason: why)
    }

    private func invalid(_ code: Int) -> InputError {
        let why = String(cString: ZSTD_getErrorName(code))
        // A window beyond libzstd's default limit (128 MB, e.g. `zstd --long=31`) is a complete, valid file that
        // this reader refuses to keep that much history for: say so instead of suggesting truncation.
        if ZSTD_getErrorCode(code) == ZSTD_error_frameParameter_windowTooLarge {
            return InputError(.windowTooLarge, input: name, compression: .zstd, reason: why)
        }
        if ZSTD_getErrorCode(code) == ZSTD_error_checksum_wrong {
            return InputError(.checksumMismatch, input: name, compression: .zstd, reason: why)
        }
        return InputError(.corrupt, input: name, compression: .zstd, reason: why)
    }
}
