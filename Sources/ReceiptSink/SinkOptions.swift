import ReceiptModel

/// Tuning of the file writers. The defaults suit analytics engines; tests shrink them to force several pages,
/// row groups and dictionary fallbacks on small inputs.
public struct SinkOptions: Sendable {
    /// A Parquet row group is flushed when it reaches this many rows...
    public var rowGroupRows: Int = 1_000_000
    /// ...or when its buffered (mostly compressed) bytes reach this size, whichever comes first.
    /// 48 MB per table keeps a run's peak RSS under 256 MB whatever the input (two tables' row groups plus about
    /// 150 MB for the pipeline, page buffers and dictionaries). Receipt-shaped data: about 800,000 receipts rows
    /// (60 bytes each compressed), and the full 1 M transactions rows (23 bytes each), per row group.
    public var rowGroupBytes: Int = 48 << 20
    /// Target uncompressed size of a data page. 256 KB rather than 1 MB: a column's page buffer is compressed and
    /// reused four times as often, so less memory is touched (fewer page faults, a lower peak RSS) and less is left
    /// to compress when the file is completed, for slightly larger files (docs/performance.md).
    public var pageBytes: Int = 256 << 10
    /// Upper bound on rows per data page (bounds the per-page level and index buffers).
    public var maxRowsPerPage: Int = 16_384
    /// A dictionary-encoded column switches to PLAIN for the rest of the row group beyond this dictionary size.
    public var dictionaryMaxBytes: Int = 1 << 20
    /// zstd level of Parquet pages. Level 1, not 3: page compression is about half of the writer's time, and level 1
    /// makes the writer about a quarter faster for files about 5% larger (docs/performance.md).
    public var zstdLevel: Int32 = 1
    /// Bytes kept before an OPTIONAL column's page values for its definition levels; nil: sized from
    /// `maxRowsPerPage` (`ParquetColumnWriter.levelsHeadroom`). Tests set it to force the copy path.
    var levelsHeadroom: Int? = nil
    /// String columns that are dictionary-encoded (low cardinality); the rest are PLAIN.
    public var dictionaryColumns: Set<String> = SinkOptions.defaultDictionaryColumns
    /// Shown every chunk of rows a table file writer (`makeTableFileWriter`) writes, before it writes them.
    public var observer: TableObserver? = nil

    public static let defaultDictionaryColumns: Set<String> = [
        "source", "error_code", "error_detail", "receipt_type", "bundle_id", "application_version",
        "original_application_version", "digest_algorithm", "signer_sha256", "product_id", "promotional_offer_id",
    ]

    public init() {}
}

/// Sees the rows of the tables written through `makeTableFileWriter` (the purchase-history tables), for
/// aggregates kept beside the tables. Called from the thread that writes the table.
public protocol TableObserver: AnyObject, Sendable {
    func observe(_ table: ColumnTable)
}
