#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Creates the sink for `format` writing into `directory` (created, with its parents, when missing). With a
/// `unit`, `finish()` stages the tables and `unit.commit` makes them visible with the run's other files.
public func makeSink(
    format: OutputFormat, directory: String, metadata: RunMetadata, options: SinkOptions = SinkOptions(),
    unit: CommitUnit? = nil
) throws(SinkError) -> BatchSink {
    try makeDirectory(directory)
    switch format {
    case .parquet: return try ParquetSink(directory: directory, metadata: metadata, options: options, unit: unit)
    case .csv: return try CSVSink(directory: directory, raw: options.csvRaw, unit: unit)
    case .ndjson: return try NDJSONSink(directory: directory, unit: unit)
    }
}

/// Creates the sink for `--out -`: receipts rows as CSV or NDJSON on standard output, flushed per batch.
public func makeStreamSink(format: OutputFormat, options: SinkOptions = SinkOptions(), fileDescriptor: Int32 = 1)
    throws(SinkError) -> BatchSink
{
    try StreamSink(format: format, csvRaw: options.csvRaw, fileDescriptor: fileDescriptor)
}

/// `mkdir -p`.
public func makeDirectory(_ path: String) throws(SinkError) {
    var st = stat()
    if stat(path, &st) == 0 {
        if (st.st_mode & S_IFMT) == S_IFDIR { return }
        throw SinkError(.notADirectory, path: path)
    }
    var prefix = ""
    for (i, part) in path.split(separator: "/", omittingEmptySubsequences: false).enumerated() {
        prefix += (i == 0 ? "" : "/") + part
        if prefix.isEmpty { continue }
        if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
            throw SinkError.system(.createOutputFolder, prefix)
        }
    }
}
