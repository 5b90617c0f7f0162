import CZstd

/// The layout of spill files, versioned: a resumed run adopts the spill of parts an earlier attempt committed,
/// and must refuse one written in another layout rather than misread it (`HistoryCollector.adoptPart`).
///
/// A spill file is a sequence of blocks. A block holds whole records, each framed by its length (a varint) and,
/// for a type with an order prefix, beginning with it (`SpillPrefixed`); a block is stored as an 8-byte header (the records' byte count and the stored byte count, little-endian 32-bit) and
/// the records compressed as one zstd frame with a checksum. Records of one file share their bundle and product
/// ids and much of their transaction ids, which zstd's window finds; the level is zstd's fastest standard one.
enum SpillFormat {
    /// Written into a committed part's spill folder (`versionFile`) and compared when a resumed run adopts it.
    static let version = "receiptflow-spill 3"
    static let versionFile = "format"
    /// zstd level of the blocks.
    static let level: Int32 = 1
    /// A block's records are written once they reach this size (a block's records are read into memory whole:
    /// a merge holds one block per run it reads).
    static let blockBytes = 64 << 10
    /// No writer makes a block larger than this (a block ends after the record that crosses `blockBytes`, and a
    /// record is at most a few input records' size); a larger header means a damaged file.
    static let maximumBlockBytes = 1 << 30
    static let headerBytes = 8
}

/// One zstd compression and one decompression context, reused for every block of a spill reducer (which is used
/// from one thread at a time), and the scratch buffer compressed blocks are read into.
final class SpillBlockCodec {
    private let cctx: OpaquePointer
    private let dctx: OpaquePointer
    /// Compressed bytes: the last block made by `compress`, or read by a scanner before `decompress`.
    var scratch: [UInt8] = []

    init() throws(HistoryError) {
        guard let c = ZSTD_createCCtx() else { throw HistoryError(.internalError, detail: "zstd: out of memory") }
        guard let d = ZSTD_createDCtx() else {
            ZSTD_freeCCtx(c)
            throw HistoryError(.internalError, detail: "zstd: out of memory")
        }
        cctx = c
        dctx = d
        _ = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, SpillFormat.level)
        _ = ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)
    }

    deinit {
        ZSTD_freeCCtx(cctx)
        ZSTD_freeDCtx(dctx)
    }

    /// Appends `records` to `out` as one block (header and compressed bytes); returns the bytes appended.
    func appendBlock(_ records: [UInt8], to out: inout [UInt8]) throws(HistoryError) -> Int {
        let bound = ZSTD_compressBound(records.count)
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        let n = scratch.withUnsafeMutableBytes { dst in
            records.withUnsafeBytes { src in ZSTD_compress2(cctx, dst.baseAddress, bound, src.baseAddress, src.count) }
        }
        if ZSTD_isError(n) != 0 {
            throw HistoryError(.internalError, detail: "zstd: \(String(cString: ZSTD_getErrorName(n)))")
        }
        withUnsafeBytes(of: UInt32(records.count).littleEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(n).littleEndian) { out.append(contentsOf: $0) }
        scratch.withUnsafeBytes { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        return SpillFormat.headerBytes + n
    }

    /// Decompresses the first `stored` bytes of `scratch` into `records`, which must come to exactly `count`
    /// bytes.
    func decompress(stored: Int, count: Int, into records: inout [UInt8], path: String) throws(HistoryError) {
        if records.count < count { records = [UInt8](repeating: 0, count: count) }
        let n = records.withUnsafeMutableBytes { dst in
            scratch.withUnsafeBytes { src in ZSTD_decompressDCtx(dctx, dst.baseAddress, count, src.baseAddress, stored)
            }
        }
        if ZSTD_isError(n) != 0 || n != count {
            throw HistoryError(.spillDamaged, path: path, detail: "a block does not decompress")
        }
    }
}
