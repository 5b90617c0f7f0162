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
final class ParquetColumnWriter {
    let spec: ColumnSpec
    let type: Parquet.PhysicalType
    let optional: Bool
    let wantsDictionary: Bool
    let pageBytes: Int
    let maxRowsPerPage: Int
    let dictionaryMaxBytes: Int

    /// What the per-row loops mutate. The loops work on a local copy swapped out of `hot`, because every access
    /// to a class's stored property inside a loop pays a dynamic exclusivity check.
    struct Hot {
        // Current page.
        var levels: [UInt8] = []
        var values: [UInt8] = []
        var indices: [UInt32] = []
        var boolBits = 0
        var pageRows = 0
        var dictionaryMode = false
        // Current chunk.
        var dictionary: ByteArrayDictionary
        var stats = ColumnStatistics()
    }
    private var hot: Hot

    // Current chunk.
    private var chunk: [UInt8] = []
    private var dataUncompressed = 0
    private var dataCompressed = 0
    private var plainPages = false
    private var dictionaryPages = false
    private var chunkRows = 0

    // Scratch, reused.
    private var body: [UInt8] = []
    private var header = ThriftCompactWriter()
    /// An error raised inside a buffer closure, rethrown by the caller.
    private var pending: SinkError? = nil

    init(spec: ColumnSpec, dictionary: Bool, options: SinkOptions) {
        self.spec = spec
        type = Parquet.physicalType(spec.kind)
        optional = spec.nullable
        wantsDictionary = dictionary && spec.kind == .string
        hot = Hot(dictionary: ByteArrayDictionary())
        hot.dictionaryMode = wantsDictionary
        pageBytes = max(1, options.pageBytes)
        maxRowsPerPage = max(1, options.maxRowsPerPage)
        dictionaryMaxBytes = options.dictionaryMaxBytes
    }

    /// Bytes held for the current row group (compressed pages, the open page, the dictionary).
    var bufferedBytes: Int {
        chunk.count + hot.values.count + hot.levels.count + hot.indices.count * 4 + hot.dictionary.byteSize
    }

    // MARK: - Appending rows

    /// Appends rows `rows` of this column of `table`.
    func append(_ table: ColumnTable, rows: Range<Int>, zstd: ZstdCompressor) throws(SinkError) {
        var h = Hot(dictionary: ByteArrayDictionary(placeholder: ()))
        swap(&h, &hot)
        switch spec.kind {
        case .string: appendStrings(table.strings[spec.slot], rows, &h, zstd)
        case .int64, .timestampMillis: appendInts(table.int64s[spec.slot], rows, &h, zstd)
        case .int32: appendInts(table.int32s[spec.slot], rows, &h, zstd)
        case .bool: appendBools(table.bools[spec.slot], rows, &h, zstd)
        }
        swap(&h, &hot)
        chunkRows += rows.count
        if let e = pending {
            pending = nil
            throw e
        }
    }

    private func appendStrings(_ col: StringColumn, _ rows: Range<Int>, _ h: inout Hot, _ zstd: ZstdCompressor) {
        withExtendedLifetime(col) {
            let bytes = col.bytes
            let offs = col.offsets
            let valid = col.valid
            do {
                do {
                    for r in rows {
                        // The table keeps offsets.count == rowCount + 1 and valid.count == rowCount; rows is within.
                        let present = valid[r]
                        assert(present || optional, "null in REQUIRED column \(spec.name)")
                        if optional {
                            h.levels.append(present ? 1 : 0)
                            if !present {
                                h.stats.nullCount += 1
                                endRow(&h, zstd)
                                continue
                            }
                        }
                        let v = UnsafeRawBufferPointer(rebasing: bytes[offs[r]..<offs[r + 1]])
                        if h.dictionaryMode {
                            let (i, isNew) = h.dictionary.index(of: v)
                            h.indices.append(i)
                            // Every value is either a new entry or equal to an old one: stats need only the new.
                            if isNew { h.stats.update(v) }
                        } else {
                            var len = UInt32(truncatingIfNeeded: v.count).littleEndian
                            withUnsafeBytes(of: &len) { h.values.append(contentsOf: $0) }
                            h.values.append(contentsOf: v)
                            h.stats.update(v)
                        }
                        endRow(&h, zstd)
                    }
                }
            }
        }
    }

    private func appendInts<T: FixedWidthInteger & BinaryIntegerOrBool & Sendable>(
        _ col: PrimitiveColumn<T>, _ rows: Range<Int>, _ h: inout Hot, _ zstd: ZstdCompressor
    ) {
        withExtendedLifetime(col) {
            let vals = col.values
            let valid = col.valid
            do {
                for r in rows {
                    let present = valid[r]  // valid.count == values.count == rowCount
                    assert(present || optional, "null in REQUIRED column \(spec.name)")
                    if optional {
                        h.levels.append(present ? 1 : 0)
                        if !present {
                            h.stats.nullCount += 1
                            endRow(&h, zstd)
                            continue
                        }
                    }
                    var le = vals[r].littleEndian
                    withUnsafeBytes(of: &le) { h.values.append(contentsOf: $0) }
                    h.stats.update(Int64(vals[r]))
                    endRow(&h, zstd)
                }
            }
        }
    }

    private func appendBools(_ col: PrimitiveColumn<Bool>, _ rows: Range<Int>, _ h: inout Hot, _ zstd: ZstdCompressor) {
        withExtendedLifetime(col) {
            let vals = col.values
            let valid = col.valid
            do {
                for r in rows {
                    let present = valid[r]  // valid.count == values.count == rowCount
                    assert(present || optional, "null in REQUIRED column \(spec.name)")
                    if optional {
                        h.levels.append(present ? 1 : 0)
                        if !present {
                            h.stats.nullCount += 1
                            endRow(&h, zstd)
                            continue
                        }
                    }
                    // PLAIN booleans: bit-packed LSB first, no header.
                    if h.boolBits & 7 == 0 { h.values.append(0) }
                    if vals[r] { h.values[h.values.count - 1] |= UInt8(1) << UInt8(h.boolBits & 7) }
                    h.boolBits += 1
                    h.stats.update(vals[r] ? 1 : 0)
                    endRow(&h, zstd)
                }
            }
        }
    }

    /// Counts a row into the page and closes the page when it is full or the dictionary just grew too big.
    @inline(__always) private func endRow(_ h: inout Hot, _ zstd: ZstdCompressor) {
        h.pageRows += 1
        let overDictionary = h.dictionaryMode && h.dictionary.byteSize > dictionaryMaxBytes
        if h.values.count + h.indices.count >= pageBytes || h.pageRows >= maxRowsPerPage || overDictionary {
            finishPage(&h, zstd)
            if overDictionary { h.dictionaryMode = false }
        }
    }

    // MARK: - Pages

    /// Encodes, compresses and appends the open page to the chunk buffer.
    private func finishPage(_ h: inout Hot, _ zstd: ZstdCompressor) {
        guard h.pageRows > 0 else { return }
        let isDictionaryPage = h.dictionaryMode
        body.removeAll(keepingCapacity: true)
        if optional {
            // Data page v1: definition levels carry a u32 LE byte length.
            body.append(contentsOf: [0, 0, 0, 0])
            h.levels.withUnsafeBufferPointer { RLEHybrid.encode($0, bitWidth: 1, into: &body) }
            let n = UInt32(body.count - 4)
            for k in 0..<4 { body[k] = UInt8(truncatingIfNeeded: n >> (8 * UInt32(k))) }
        }
        if isDictionaryPage {
            let width = RLEHybrid.bitWidth(forMax: UInt32(max(h.dictionary.count, 1) - 1))
            body.append(UInt8(width))
            h.indices.withUnsafeBufferPointer { RLEHybrid.encode($0, bitWidth: width, into: &body) }
            dictionaryPages = true
        } else {
            body.append(contentsOf: h.values)
            plainPages = true
        }
        do throws(SinkError) {
            let n = try zstd.compress(body)
            Self.dataPageHeader(
                &header, uncompressed: body.count, compressed: n, numValues: h.pageRows,
                encoding: isDictionaryPage ? .rleDictionary : .plain)
            chunk.append(contentsOf: header.bytes)
            zstd.output.withUnsafeBytes { chunk.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            dataUncompressed += header.bytes.count + body.count
            dataCompressed += header.bytes.count + n
        } catch {
            if pending == nil { pending = error }
        }
        h.levels.removeAll(keepingCapacity: true)
        h.values.removeAll(keepingCapacity: true)
        h.indices.removeAll(keepingCapacity: true)
        h.boolBits = 0
        h.pageRows = 0
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
        finishPage(&hot, zstd)
        if let e = pending {
            pending = nil
            throw e
        }
        var uncompressed = dataUncompressed
        var compressed = dataCompressed
        var dictionaryOffset: Int64? = nil
        if dictionaryPages {
            dictionaryOffset = file.offset
            let n = try zstd.compress(hot.dictionary.plain)
            header.reset()
            header.i32(1, Parquet.PageType.dictionaryPage.rawValue)
            header.i32(2, Int32(truncatingIfNeeded: hot.dictionary.byteSize))
            header.i32(3, Int32(truncatingIfNeeded: n))
            header.structBegin(7)
            header.i32(1, Int32(truncatingIfNeeded: hot.dictionary.count))
            header.i32(2, Parquet.Encoding.plain.rawValue)
            header.structEnd()
            header.stop()
            try file.write(header.bytes)
            try file.write(zstd.output, count: n)
            uncompressed += header.bytes.count + hot.dictionary.byteSize
            compressed += header.bytes.count + n
        }
        let dataOffset = file.offset
        try file.write(chunk)

        var encodings: [Int32] = []
        if plainPages || dictionaryPages { encodings.append(Parquet.Encoding.plain.rawValue) }
        encodings.append(Parquet.Encoding.rle.rawValue)
        if dictionaryPages { encodings.append(Parquet.Encoding.rleDictionary.rawValue) }
        var minValue: [UInt8] = []
        var maxValue: [UInt8] = []
        let hasMin = hot.stats.appendBound(min: true, type: type, into: &minValue)
        let hasMax = hot.stats.appendBound(min: false, type: type, into: &maxValue)
        let meta = ColumnChunkMeta(
            numValues: Int64(chunkRows), totalUncompressed: Int64(uncompressed), totalCompressed: Int64(compressed),
            dataPageOffset: dataOffset, dictionaryPageOffset: dictionaryOffset, encodings: encodings,
            nullCount: hot.stats.nullCount, minValue: hasMin && hasMax ? minValue : nil,
            maxValue: hasMin && hasMax ? maxValue : nil)

        chunk.removeAll(keepingCapacity: true)
        hot.dictionary.reset()
        hot.stats.reset()
        dataUncompressed = 0
        dataCompressed = 0
        plainPages = false
        dictionaryPages = false
        chunkRows = 0
        hot.dictionaryMode = wantsDictionary
        return meta
    }
}
