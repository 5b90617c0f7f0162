import ReceiptModel

/// `--format parquet`: `receipts.parquet` and `transactions.parquet`, sharing one zstd context.
public final class ParquetSink: BatchSink {
    private let receipts: ParquetFileWriter
    private let transactions: ParquetFileWriter
    private var done = false

    public convenience init(directory: String, metadata: RunMetadata, options: SinkOptions = SinkOptions())
        throws(SinkError)
    {
        try self.init(files: .single(directory, .parquet), metadata: metadata, options: options)
    }

    init(files: TableFiles, metadata: RunMetadata, options: SinkOptions) throws(SinkError) {
        let zstd = try ZstdCompressor(level: options.zstdLevel)
        receipts = try ParquetFileWriter(
            schema: .receipts, directory: files.receipts.directory, fileName: files.receipts.name,
            metadata: metadata, options: options, zstd: zstd)
        do {
            transactions = try ParquetFileWriter(
                schema: .transactions, directory: files.transactions.directory, fileName: files.transactions.name,
                metadata: metadata, options: options, zstd: zstd)
        } catch {
            receipts.abort()
            throw error
        }
    }

    public func write(_ batch: ColumnBatch) throws(SinkError) {
        try receipts.append(batch.receipts)
        try transactions.append(batch.transactions)
    }

    public func finish() throws(SinkError) {
        guard !done else { return }
        done = true
        do {
            try receipts.finish()
            try transactions.finish()
        } catch {
            transactions.abort()
            throw error
        }
    }

    public func abort() {
        done = true
        receipts.abort()
        transactions.abort()
    }
}
