import Dispatch
import ReceiptModel

/// `--format parquet`: `receipts.parquet`, `transactions.parquet` and `renewals.parquet`, each with its own zstd
/// context, so that `finish` can complete the receipts and transactions files at once.
public final class ParquetSink: BatchSink {
    private let receipts: ParquetFileWriter
    private let transactions: ParquetFileWriter
    private let renewals: ParquetFileWriter
    private var done = false

    public convenience init(
        directory: String, metadata: RunMetadata, options: SinkOptions = SinkOptions(), unit: CommitUnit? = nil
    ) throws(SinkError) {
        try self.init(files: .single(directory, .parquet, unit: unit), metadata: metadata, options: options)
    }

    init(files: TableFiles, metadata: RunMetadata, options: SinkOptions) throws(SinkError) {
        receipts = try ParquetFileWriter(
            schema: .receipts, directory: files.receipts.directory, fileName: files.receipts.name,
            metadata: metadata, options: options, zstd: try ZstdCompressor(level: options.zstdLevel), unit: files.unit)
        do {
            transactions = try ParquetFileWriter(
                schema: .transactions, directory: files.transactions.directory, fileName: files.transactions.name,
                metadata: metadata, options: options, zstd: try ZstdCompressor(level: options.zstdLevel),
                unit: files.unit)
        } catch {
            receipts.abort()
            throw error
        }
        do {
            renewals = try ParquetFileWriter(
                schema: .renewals, directory: files.renewals.directory, fileName: files.renewals.name,
                metadata: metadata, options: options, zstd: try ZstdCompressor(level: options.zstdLevel),
                unit: files.unit)
        } catch {
            receipts.abort()
            transactions.abort()
            throw error
        }
    }

    public func write(_ batch: ColumnBatch) throws(SinkError) {
        try receipts.append(batch.receipts)
        try transactions.append(batch.transactions)
        try renewals.append(batch.renewals)
    }

    /// Completes both files, the receipts file on another thread while this one completes the transactions file:
    /// each compresses its columns' last pages and is written and synced, work that otherwise runs alone after the
    /// workers have finished. The two share nothing: each has its own columns, compressor and file. When either
    /// fails, neither is left behind as a temporary file; a file already renamed into place stays.
    public func finish() throws(SinkError) {
        guard !done else { return }
        done = true
        let other = FinishTask(receipts)
        let group = DispatchGroup()
        DispatchQueue.global(qos: .userInitiated).async(group: group) { other.run() }
        var failure: SinkError? = nil
        do {
            try transactions.finish()
            // Small (renewal infos only): completed after the transactions file on this thread.
            try renewals.finish()
        } catch { failure = error }
        group.wait()
        if let error = failure ?? other.failure {
            receipts.abort()
            transactions.abort()
            renewals.abort()
            throw error
        }
    }

    public func abort() {
        done = true
        receipts.abort()
        transactions.abort()
        renewals.abort()
    }
}

/// One file's `finish` on another thread, and its error. The writer is used by that thread alone until `run`
/// returns, which the caller waits for.
private final class FinishTask: @unchecked Sendable {
    private let writer: ParquetFileWriter
    private let lock = Lock()
    private var error: SinkError? = nil

    init(_ writer: ParquetFileWriter) { self.writer = writer }

    var failure: SinkError? { lock.withLock { error } }

    func run() {
        do throws(SinkError) {
            try writer.finish()
        } catch {
            lock.withLock { self.error = error }
        }
    }
}
