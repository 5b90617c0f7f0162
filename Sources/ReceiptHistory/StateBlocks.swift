import CZstd

/// The body of a history state file: its bytes cut into blocks, each compressed as one zstd frame by libzstd's
/// stable API, and written as a uint32 compressed size, a uint32 size and the frame; a uint32 0 ends the body.
/// A reader takes any zstd frame whatever its compression level, so the level can change without a new format.
enum StateBlocks {
    /// The compression level blocks are written at. On the state's records, level 1 compresses as tightly as
    /// level 3 (within 2%) at about half its CPU time.
    static let level: Int32 = 1

    /// The largest block a reader accepts (a writer's blocks hold 256 KiB plus one record).
    static let maxBlock = 2 * HistoryStateFormat.maxFrame

    /// The block of `bytes`.
    static func compress(_ bytes: [UInt8], level: Int32 = StateBlocks.level) throws(HistoryError) -> [UInt8] {
        let bound = ZSTD_compressBound(bytes.count)
        var out = [UInt8](repeating: 0, count: 8 + bound)
        let n = out.withUnsafeMutableBytes { o in
            bytes.withUnsafeBytes { i in
                // `o` holds 8 + bound bytes: the frame goes after the two sizes, at most `bound` long.
                ZSTD_compress(o.baseAddress! + 8, bound, i.baseAddress, i.count, level)
            }
        }
        if ZSTD_isError(n) != 0 {
            throw HistoryError(
                .internalError,
                detail: "zstd cannot compress the history state: "
                    + String(cString: ZSTD_getErrorName(n)))
        }
        out.removeLast(bound - n)
        withUnsafeBytes(of: UInt32(n).littleEndian) { for i in 0..<4 { out[i] = $0[i] } }
        withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { for i in 0..<4 { out[4 + i] = $0[i] } }
        return out
    }

    /// The bytes of a block's frame, which must decompress to exactly `size` bytes.
    static func decompress(_ frame: [UInt8], size: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: size)
        let n = out.withUnsafeMutableBytes { o in
            frame.withUnsafeBytes { i in ZSTD_decompress(o.baseAddress, size, i.baseAddress, i.count) }
        }
        guard ZSTD_isError(n) == 0, n == size else { return nil }
        return out
    }
}

/// Reads the body of a state file block by block (`StateBlocks`), giving its bytes back as frames.
final class StateBody {
    private let raw: StateScanner
    private var buffer: [UInt8] = []
    private var position = 0
    private var ended = false

    /// Reads from `raw`, positioned at the body (after the magic and version).
    init(_ raw: StateScanner) { self.raw = raw }

    private var path: String { raw.path }

    /// Loads blocks until `n` bytes are buffered.
    private func need(_ n: Int) throws(HistoryStateError) {
        while buffer.count - position < n {
            guard !ended else { throw HistoryStateError(.damaged, path: path, detail: "it ends early") }
            let compressed = Int(UInt32(bitPattern: try raw.int32()))
            if compressed == 0 {
                ended = true
                continue
            }
            let size = Int(UInt32(bitPattern: try raw.int32()))
            guard size > 0, size <= StateBlocks.maxBlock, compressed <= ZSTD_compressBound(size) else {
                throw HistoryStateError(.damaged, path: path, detail: "a block of \(compressed) → \(size) bytes")
            }
            guard let block = StateBlocks.decompress(try raw.read(compressed), size: size) else {
                throw HistoryStateError(.damaged, path: path, detail: "a block does not decompress")
            }
            buffer.removeFirst(position)
            position = 0
            buffer.append(contentsOf: block)
        }
    }

    func read(_ n: Int) throws(HistoryStateError) -> [UInt8] {
        try need(n)
        defer { position += n }
        return Array(buffer[position..<(position + n)])
    }

    /// The next frame's bytes; nil for an empty frame (the end of a section).
    func frame() throws(HistoryStateError) -> [UInt8]? {
        let b = try read(4)
        let n = Int(b.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) })
        if n == 0 { return nil }
        guard n <= HistoryStateFormat.maxFrame else {
            throw HistoryStateError(.damaged, path: path, detail: "a frame of \(n) bytes")
        }
        return try read(n)
    }

    /// Checks that the body ends here: nothing left in the last block, and the end marker next.
    func finish() throws(HistoryStateError) {
        let marker = ended ? 0 : try raw.int32()
        guard buffer.count == position, marker == 0 else {
            throw HistoryStateError(.damaged, path: path, detail: "bytes follow its trailer")
        }
    }
}
