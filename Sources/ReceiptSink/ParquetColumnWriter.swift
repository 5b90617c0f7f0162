import ReceiptModel

/// What the footer needs to know about one finished column chunk.
struct ColumnChunkMeta {
    var numValues: Int64
    var totalUncompressed: Int64
    var totalCompressed: Int64
    var dataPageOffset: Int64
    var dictionaryPageOffset: Int64?
    var encodings: [Int32]
    var nullCount: Int64
    var minValue: [UInt8]?
    var maxValue: [UInt8]?
}

/// Buffers one column of the current row group as finished, compressed data pages (data page v1), and writes the
/// chunk (dictionary page first, when used) at the end of the row group.
///
/// A page holds either dictionary indices or PLAIN values. A dictionary-encoded string column falls back to PLAIN
/// for the rest of the chunk once its dictionary outgrows `dictionaryMaxBytes`, as other writers do; the chunk then
/// holds both kinds of pages and lists both encodings.
///
/// The row loops are in ParquetColumnWriter+Rows.swift.
final class ParquetColumnWriter {
    let spec: ColumnSpec
    let type: Parquet.PhysicalType
    let optional: Bool
    let wantsDictionary: Bool
    let pageBytes: Int
    let maxRowsPerPage: Int
    let dictionaryMaxBytes: Int

    // Current page.
    /// Definition levels, one byte (0 or 1) per row; OPTIONAL columns only.
    var levels = ByteBuffer()
    /// PLAIN values; an OPTIONAL column's keep headroom for the page's definition levels (see `finishPage`).
    var values: ByteBuffer
    /// Dictionary indices, `UInt32` each.
    var indices = ByteBuffer()
    var indexCount = 0
    var boolBits = 0
    var pageRows = 0
    var dictionaryMode: Bool

    // Current chunk.
    var dictionary = ByteArrayDictionary()
    var stats = ColumnStatistics()
    private var chunk = SegmentedBuffer()
    private var dataUncompressed = 0
    private var dataCompressed = 0
    private var plainPages = false
    private var dictionaryPages = false
    private var chunkRows = 0

    // Scratch, reused.
    private var header = ThriftCompactWriter()
    /// An error raised while closing a page inside a row loop, rethrown by the caller.
    private var pending: SinkError? = nil

    init(spec: ColumnSpec, dictionary: Bool, options: SinkOptions) {
        self.spec = spec
        type = Parquet.physicalType(spec.kind)
        optional = spec.nullable
        wantsDictionary = dictionary && spec.kind == .string
        dictionaryMode = wantsDictionary
        pageBytes = max(1, options.pageBytes)
        maxRowsPerPage = max(1, options.maxRowsPerPage)
        dictionaryMaxBytes = options.dictionaryMaxBytes
        values = ByteBuffer(headroom: optional ? Self.levelsHeadroom(options) : 0)
    }

    /// Room before an OPTIONAL column's values for its encoded definition levels: a u32 length, then at most 2
    /// bits per row (a run of 8 levels takes 2 bytes at worst, RLE or bit-packed) plus slack for longer run
    /// headers. Levels that do not fit (a `maxRowsPerPage` past the 64 KB cap) take the copy path.
    static func levelsHeadroom(_ options: SinkOptions) -> Int {
        options.levelsHeadroom ?? min(4 + max(1, options.maxRowsPerPage) / 4 + 64, 64 << 10)
    }

    /// Bytes held for the current row group (compressed pages, the open page, the dictionary).
    var bufferedBytes: Int {
        chunk.count + values.count + levels.count + indexCount * 4 + dictionary.byteSize
    }

    // MARK: - Appending rows

    /// Appends rows `rows` of this column of `table` (whose columns all hold `table.rowCount` rows).
    func append(_ table: ColumnTable, rows: Range<Int>, zstd: ZstdCompressor) throws(SinkError) {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= table.rowCount, "rows beyond the table")
        if !rows.isEmpty {
            switch spec.kind {
            case .string: appendStrings(table.strings[spec.slot], rows, zstd)
            case .int64, .timestampMillis: appendInts(table.int64s[spec.slot], rows, zstd)
            case .int32, .date: appendInts(table.int32s[spec.slot], rows, zstd)
            case .bool: appendBools(table.bools[spec.slot], rows, zstd)
            }
        }
        chunkRows += rows.count
        if let e = pending {
            pending = nil
            throw e
        }
    }

    // MARK: - Pages

    /// Encodes, compresses and appends the open page to the chunk buffer.
    func finishPage(_ zstd: ZstdCompressor) {
        guard pageRows > 0 else { return }
        let isDictionaryPage = dictionaryMode
        // The page body is assembled in the sink's shared scratch buffer (one per sink, not one per column).
        zstd.page.removeAll()
        if optional {
            // Data page v1: definition levels carry a u32 LE byte length.
            zstd.page.appendLittleEndian(UInt32(0))
            let levelBytes = levels.bytes.bindMemory(to: UInt8.self)  // levels holds only UInt8 values
            RLEHybrid.encode(levelBytes, bitWidth: 1, into: &zstd.page)
            zstd.page.patchUInt32(UInt32(zstd.page.count - 4), at: 0)
        }
        if isDictionaryPage {
            let width = RLEHybrid.bitWidth(forMax: UInt32(max(dictionary.count, 1) - 1))
            zstd.page.append(UInt8(width))
            // indices holds only UInt32 values, at offsets that are multiples of 4 from a 16-aligned base.
            let indexValues = UnsafeBufferPointer(
                start: indices.base.bindMemory(to: UInt32.self, capacity: indexCount), count: indexCount)
            RLEHybrid.encode(indexValues, bitWidth: width, into: &zstd.page)
            dictionaryPages = true
        } else {
            plainPages = true
        }
        // A REQUIRED column's PLAIN page is its values alone; an OPTIONAL column's puts the levels in the headroom
        // before the values. Either way the values are compressed where they are, without a copy (the copy of
        // the values into the page buffer was most of the writer's memmove).
        let page: UnsafeRawBufferPointer
        if isDictionaryPage {
            page = zstd.page.bytes
        } else if !optional {
            page = values.bytes
        } else if let span = values.spanWithPrefix(zstd.page.bytes) {
            page = span
        } else {
            zstd.page.append(values.bytes)
            page = zstd.page.bytes
        }
        do throws(SinkError) {
            let n = try zstd.compress(page)
            Self.dataPageHeader(
                &header, uncompressed: page.count, compressed: n, numValues: pageRows,
                encoding: isDictionaryPage ? .rleDictionary : .plain)
            header.bytes.withUnsafeBytes { chunk.append($0) }
            chunk.append(zstd.compressed)
            dataUncompressed += header.bytes.count + page.count
            dataCompressed += header.bytes.count + n
        } catch {
            if pending == nil { pending = error }
        }
        levels.removeAll()
        values.removeAll()
        indices.removeAll()
        indexCount = 0
        boolBits = 0
        pageRows = 0
    }

    /// A `PageHeader` of a v1 data page; levels are always declared RLE, even for REQUIRED columns.
    static func dataPageHeader(
        _ header: inout ThriftCompactWriter, uncompressed: Int, compressed: Int, numValues: Int,
        encoding: Parquet.Encoding
    ) {
        header.reset()
        header.i32(1, Parquet.PageType.dataPage.rawValue)
        header.i32(2, Int32(truncatingIfNeeded: uncompressed))
        header.i32(3, Int32(truncatingIfNeeded: compressed))
        header.structBegin(5)
        header.i32(1, Int32(truncatingIfNeeded: numValues))  // values including nulls
        header.i32(2, encoding.rawValue)
        header.i32(3, Parquet.Encoding.rle.rawValue)
        header.i32(4, Parquet.Encoding.rle.rawValue)
        header.structEnd()
        header.stop()
    }

    // MARK: - Chunk

    /// Writes the chunk of the current row group to `file` and resets for the next one.
    func finishChunk(to file: OutputFile, zstd: ZstdCompressor) throws(SinkError) -> ColumnChunkMeta {
        finishPage(zstd)
        if let e = pending {
            pending = nil
            throw e
        }
        var uncompressed = dataUncompressed
        var compressed = dataCompressed
        var dictionaryOffset: Int64? = nil
        if dictionaryPages {
            dictionaryOffset = file.offset
            let n = try zstd.compress(dictionary.plain)
            header.reset()
            header.i32(1, Parquet.PageType.dictionaryPage.rawValue)
            header.i32(2, Int32(truncatingIfNeeded: dictionary.byteSize))
            header.i32(3, Int32(truncatingIfNeeded: n))
            header.structBegin(7)
            header.i32(1, Int32(truncatingIfNeeded: dictionary.count))
            header.i32(2, Parquet.Encoding.plain.rawValue)
            header.structEnd()
            header.stop()
            try file.write(header.bytes)
            try file.write(zstd.compressed)
            uncompressed += header.bytes.count + dictionary.byteSize
            compressed += header.bytes.count + n
        }
        let dataOffset = file.offset
        try chunk.forEachSegment { (p) throws(SinkError) in try file.write(p) }

        var encodings: [Int32] = []
        if plainPages || dictionaryPages { encodings.append(Parquet.Encoding.plain.rawValue) }
        encodings.append(Parquet.Encoding.rle.rawValue)
        if dictionaryPages { encodings.append(Parquet.Encoding.rleDictionary.rawValue) }
        var minValue: [UInt8] = []
        var maxValue: [UInt8] = []
        let hasMin = stats.appendBound(min: true, type: type, into: &minValue)
        let hasMax = stats.appendBound(min: false, type: type, into: &maxValue)
        let meta = ColumnChunkMeta(
            numValues: Int64(chunkRows), totalUncompressed: Int64(uncompressed), totalCompressed: Int64(compressed),
            dataPageOffset: dataOffset, dictionaryPageOffset: dictionaryOffset, encodings: encodings,
            nullCount: stats.nullCount, minValue: hasMin && hasMax ? minValue : nil,
            maxValue: hasMin && hasMax ? maxValue : nil)

        chunk.removeAll()
        dictionary.reset()
        stats.reset()
        dataUncompressed = 0
        dataCompressed = 0
        plainPages = false
        dictionaryPages = false
        chunkRows = 0
        dictionaryMode = wantsDictionary
        return meta
    }
}
