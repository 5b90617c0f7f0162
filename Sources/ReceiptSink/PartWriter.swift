import ReceiptModel

/// Writes a run's tables as folders of parts: `receipts/part-00000.<ext>`, `transactions/part-00000.<ext>`, ...
/// Each part is a complete file of its format (a Parquet part has its own footer; a CSV part its own header),
/// written under a temporary name and made durable by `commitPart()`: data synced, renamed, folder synced.
/// Readers (DuckDB, Spark, pyarrow, polars) take a folder as one table; parts sort by name in input order.
///
/// The caller decides where parts end (at batch boundaries) and records committed parts in its manifest only
/// after `commitPart()` returns, so that a crash leaves at worst a committed part the manifest does not know
/// (removed on resume) or a temporary file (removed too).
public final class PartWriter {
    public let format: OutputFormat
    public let directory: String
    private let metadata: RunMetadata
    private let options: SinkOptions
    private var open: BatchSink? = nil
    /// The number of the part being written (or the next one when none is open).
    public private(set) var partIndex: Int
    /// Rows of the receipts table in the open part.
    public private(set) var rowsInPart = 0

    /// Creates the table folders under `directory` (and `directory` itself when missing).
    public init(
        format: OutputFormat, directory: String, metadata: RunMetadata, options: SinkOptions = SinkOptions(),
        firstPart: Int = 0
    ) throws(SinkError) {
        self.format = format
        self.directory = directory
        self.metadata = metadata
        self.options = options
        partIndex = firstPart
        try makeDirectory(directory)
        for folder in Self.tableFolders(format) { try makeDirectory(join(directory, folder)) }
        try syncDirectory(directory)
    }

    /// Part numbers stay below this, so that every name has five digits and sorting by name is input order.
    public static let maxParts = 100_000

    deinit { open?.abort() }

    /// The folders a format writes: NDJSON has no transactions table (objects carry their purchases).
    public static func tableFolders(_ format: OutputFormat) -> [String] {
        format == .ndjson ? ["receipts"] : ["receipts", "transactions", "renewals"]
    }

    /// `part-00042.parquet`: five digits, so that names sort in part order (parts stop at `maxParts`).
    public static func fileName(_ index: Int, _ format: OutputFormat) -> String {
        let digits = String(index)
        return "part-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + "." + format.fileExtension
    }

    /// The part's files relative to `directory`, as a manifest records them.
    public static func relativePaths(_ index: Int, _ format: OutputFormat) -> [String] {
        tableFolders(format).map { $0 + "/" + fileName(index, format) }
    }

    /// Appends a batch to the open part, opening the part first when none is.
    public func write(_ batch: ColumnBatch) throws(SinkError) {
        try openPart().write(batch)
        rowsInPart += batch.receipts.rowCount
    }

    /// Makes the open part durable under its final names (an empty part when nothing was written since the last
    /// commit, so that a run always leaves each table at least one file with its schema) and returns its number.
    @discardableResult
    public func commitPart() throws(SinkError) -> Int {
        let sink = try openPart()
        open = nil
        try sink.finish()
        for folder in Self.tableFolders(format) { try syncDirectory(join(directory, folder)) }
        let index = partIndex
        partIndex += 1
        rowsInPart = 0
        return index
    }

    /// Removes the open part's temporary files; committed parts stay.
    public func discardPart() {
        open?.abort()
        open = nil
        rowsInPart = 0
    }

    public var hasOpenPart: Bool { open != nil }

    private func openPart() throws(SinkError) -> BatchSink {
        if let open { return open }
        guard partIndex < Self.maxParts else {
            // A sixth digit would sort part-100000 before part-99999: readers would misorder rows.
            throw SinkError(.tooManyParts, value: "\(Self.maxParts)")
        }
        let files = TableFiles.part(partIndex, in: directory, format)
        let sink: BatchSink
        switch format {
        case .parquet: sink = try ParquetSink(files: files, metadata: metadata, options: options)
        case .csv: sink = try CSVSink(files: files, raw: options.csvRaw)
        case .ndjson: sink = try NDJSONSink(files: files)
        }
        open = sink
        return sink
    }
}
