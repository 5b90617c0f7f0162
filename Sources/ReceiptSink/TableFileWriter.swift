import ReceiptModel

/// Writes one table of any schema as one file, `<schema name>.<ext>` in a directory, under a temporary name
/// until `finish()` renames it into place: Parquet, CSV (CSVEncoder's dialect) or NDJSON (one JSON object per
/// row, keys in column order, timestamps as CSV writes them, nulls as `null`).
public protocol TableFileWriter: AnyObject {
    /// The file's final path.
    var path: String { get }
    func append(_ table: ColumnTable) throws(SinkError)
    func finish() throws(SinkError)
    func abort()
}

/// The writer of `schema` as `directory/<schema.name>.<ext>`.
public func makeTableFileWriter(
    format: OutputFormat, schema: TableSchema, directory: String, metadata: RunMetadata,
    options: SinkOptions = SinkOptions(), unit: CommitUnit? = nil
) throws(SinkError) -> TableFileWriter {
    try makeDirectory(directory)
    let writer = try makeUnobservedWriter(format, schema, directory, metadata, options, unit)
    guard let observer = options.observer else { return writer }
    return ObservedTableFile(writer, observer)
}

private func makeUnobservedWriter(
    _ format: OutputFormat, _ schema: TableSchema, _ directory: String, _ metadata: RunMetadata,
    _ options: SinkOptions, _ unit: CommitUnit?
) throws(SinkError) -> TableFileWriter {
    let name = "\(schema.name).\(format.fileExtension)"
    switch format {
    case .parquet:
        return ParquetTableFile(
            try ParquetFileWriter(
                schema: schema, directory: directory, fileName: name, metadata: metadata, options: options,
                zstd: try ZstdCompressor(level: options.zstdLevel), unit: unit), path: join(directory, name))
    case .csv, .ndjson:
        return try TextTableFile(
            schema: schema, file: try OutputFile(directory: directory, name: name, unit: unit), format: format,
            csvRaw: options.csvRaw)
    }
}

/// A writer that shows each chunk of rows to an observer before writing it.
private final class ObservedTableFile: TableFileWriter {
    let writer: TableFileWriter
    let observer: TableObserver
    var path: String { writer.path }
    init(_ writer: TableFileWriter, _ observer: TableObserver) {
        self.writer = writer
        self.observer = observer
    }
    func append(_ table: ColumnTable) throws(SinkError) {
        observer.observe(table)
        try writer.append(table)
    }
    func finish() throws(SinkError) { try writer.finish() }
    func abort() { writer.abort() }
}

private final class ParquetTableFile: TableFileWriter {
    let writer: ParquetFileWriter
    let path: String
    init(_ writer: ParquetFileWriter, path: String) {
        self.writer = writer
        self.path = path
    }
    func append(_ table: ColumnTable) throws(SinkError) { try writer.append(table) }
    func finish() throws(SinkError) { try writer.finish() }
    func abort() { writer.abort() }
}

private final class TextTableFile: TableFileWriter {
    let schema: TableSchema
    let file: OutputFile
    let format: OutputFormat
    let csvRaw: Bool
    var scratch: [UInt8] = []
    var path: String { file.path }

    init(schema: TableSchema, file: OutputFile, format: OutputFormat, csvRaw: Bool) throws(SinkError) {
        self.schema = schema
        self.file = file
        self.format = format
        self.csvRaw = csvRaw
        if format == .csv {
            CSVEncoder.appendHeader(schema, into: &scratch)
            try file.write(scratch)
        }
    }

    func append(_ table: ColumnTable) throws(SinkError) {
        precondition(table.schema == schema, "table \(table.schema.name) given to the \(schema.name) writer")
        var start = 0
        while start < table.rowCount {
            let end = min(table.rowCount, start + 1024)
            scratch.removeAll(keepingCapacity: true)
            if format == .csv {
                CSVEncoder.appendRows(table, rows: start..<end, raw: csvRaw, into: &scratch)
            } else {
                for r in start..<end { Self.appendObject(table, row: r, into: &scratch) }
            }
            try file.write(scratch)
            start = end
        }
    }

    static func appendObject(_ table: ColumnTable, row r: Int, into out: inout [UInt8]) {
        var w = JSONWriter(layout: .compact)
        w.beginObject(into: &out)
        for c in table.schema.columns {
            w.key(c.name, into: &out)
            switch c.kind {
            case .string:
                let col = table.strings[c.slot]
                if col.valid[r] {
                    col.withBytes(r) { JSONText.appendString($0, into: &out) }
                } else {
                    JSONText.appendNull(into: &out)
                }
            case .int64, .timestampMillis:
                guard let v = table.int64s[c.slot][r] else {
                    JSONText.appendNull(into: &out)
                    continue
                }
                if c.kind == .int64 {
                    JSONText.appendInteger(v, into: &out)
                } else {
                    out.append(UInt8(ascii: "\""))
                    CivilTime.appendISO8601(epochMillis: v, into: &out)
                    out.append(UInt8(ascii: "\""))
                }
            case .int32:
                if let v = table.int32s[c.slot][r] {
                    JSONText.appendInteger(Int64(v), into: &out)
                } else {
                    JSONText.appendNull(into: &out)
                }
            case .date:
                if let v = table.int32s[c.slot][r] {
                    out.append(UInt8(ascii: "\""))
                    CivilTime.appendDate(days: Int64(v), into: &out)
                    out.append(UInt8(ascii: "\""))
                } else {
                    JSONText.appendNull(into: &out)
                }
            case .bool:
                if let v = table.bools[c.slot][r] {
                    JSONText.appendBool(v, into: &out)
                } else {
                    JSONText.appendNull(into: &out)
                }
            }
        }
        w.endObject(into: &out)
        out.append(0x0A)
    }

    func finish() throws(SinkError) { try file.commit() }
    func abort() { file.discard() }
}
