import ReceiptModel

/// Writes one table as one Parquet file: rows arrive in column batches, a row group is buffered (as compressed
/// pages) until it reaches `rowGroupRows` or `rowGroupBytes`, then written out; the footer comes last.
///
/// Memory is bounded by one row group plus one open page per column.
final class ParquetFileWriter {
    let schema: TableSchema
    private let file: OutputFile
    private let columns: [ParquetColumnWriter]
    private let zstd: ZstdCompressor
    private let options: SinkOptions
    private let keyValues: [(String, String)]
    private let createdBy: String
    private var rowGroups: [RowGroupMeta] = []
    private var rowsInGroup = 0
    private var totalRows: Int64 = 0

    init(
        schema: TableSchema, directory: String, fileName: String, metadata: RunMetadata, options: SinkOptions,
        zstd: ZstdCompressor, unit: CommitUnit? = nil
    ) throws(SinkError) {
        self.schema = schema
        self.options = options
        self.zstd = zstd
        columns = schema.columns.map {
            ParquetColumnWriter(spec: $0, dictionary: options.dictionaryColumns.contains($0.name), options: options)
        }
        keyValues = ParquetFileWriter.keyValues(metadata)
        createdBy = "receiptflow version \(metadata.toolVersion) (build none)"
        file = try OutputFile(directory: directory, name: fileName, unit: unit)
        try file.write(Parquet.magic)
    }

    static func keyValues(_ m: RunMetadata) -> [(String, String)] {
        var anchors: [UInt8] = []
        JSONText.appendStringArray(m.trustAnchorSHA256, into: &anchors)
        var inputs: [UInt8] = []
        JSONText.appendStringArray(m.inputs, into: &inputs)
        return [
            ("receiptflow.version", m.toolVersion),
            ("receiptflow.trust_anchors_sha256", String(decoding: anchors, as: UTF8.self)),
            ("receiptflow.inputs", String(decoding: inputs, as: UTF8.self)),
        ]
    }

    /// Appends every row of `table` (which must have this writer's schema).
    func append(_ table: ColumnTable) throws(SinkError) {
        precondition(table.schema == schema, "table \(table.schema.name) given to the \(schema.name) writer")
        // The column writers read the buffers without bounds checks, up to rowCount.
        precondition(table.isConsistent, "a \(schema.name) table whose columns differ in length")
        let limit = max(1, options.rowGroupRows)
        var start = 0
        while start < table.rowCount {
            let n = min(table.rowCount - start, limit - rowsInGroup)
            for c in columns { try c.append(table, rows: start..<(start + n), zstd: zstd) }
            rowsInGroup += n
            start += n
            if rowsInGroup >= limit || bufferedBytes >= options.rowGroupBytes { try flushRowGroup() }
        }
    }

    private var bufferedBytes: Int { columns.reduce(0) { $0 + $1.bufferedBytes } }

    private func flushRowGroup() throws(SinkError) {
        guard rowsInGroup > 0 else { return }
        var metas: [ColumnChunkMeta] = []
        metas.reserveCapacity(columns.count)
        for c in columns { metas.append(try c.finishChunk(to: file, zstd: zstd)) }
        rowGroups.append(RowGroupMeta(columns: metas, numRows: Int64(rowsInGroup)))
        totalRows += Int64(rowsInGroup)
        rowsInGroup = 0
    }

    /// Writes the last row group and the footer, and renames the file into place.
    func finish() throws(SinkError) {
        try flushRowGroup()
        var w = ThriftCompactWriter()
        ParquetFooter.encode(
            schema: schema, rowGroups: rowGroups, numRows: totalRows, keyValues: keyValues, createdBy: createdBy,
            into: &w)
        try file.write(w.bytes)
        var len = UInt32(w.bytes.count).littleEndian
        try withUnsafeBytes(of: &len) { p throws(SinkError) in try file.write(p) }
        try file.write(Parquet.magic)
        try file.commit()
    }

    func abort() {
        file.discard()
    }
}
