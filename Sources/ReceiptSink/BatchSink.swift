import ReceiptModel

/// The table formats `export` writes.
public enum OutputFormat: String, Sendable, CaseIterable {
    case parquet
    case csv
    case ndjson

    public var fileExtension: String {
        switch self {
        case .parquet: return "parquet"
        case .csv: return "csv"
        case .ndjson: return "ndjson"
        }
    }
}

/// What a run records about itself in file metadata (Parquet key/value metadata).
public struct RunMetadata: Sendable {
    public var toolVersion: String = ReceiptflowVersion.string
    /// Hex SHA-256 fingerprints of the configured trust anchors.
    public var trustAnchorSHA256: [String] = []
    /// Input names as given on the command line.
    public var inputs: [String] = []
    public init() {}
}

/// The writer stage's interface: ordered column batches in, complete files out.
///
/// `write` is called from one thread, in batch sequence order. Files appear under their final names only in
/// `finish()`; `abort()` removes whatever was written so far.
public protocol BatchSink: AnyObject {
    func write(_ batch: ColumnBatch) throws(SinkError)
    func finish() throws(SinkError)
    func abort()
}
