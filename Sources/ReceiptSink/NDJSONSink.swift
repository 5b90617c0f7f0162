import ReceiptModel

/// `--format ndjson`: `receipts.ndjson`, the batches' verifyReceipt-shaped lines verbatim (`ColumnBatch.ndjson`).
///
/// There is no transactions file: each object carries its purchases in `receipt.in_app`, as verifyReceipt did.
public final class NDJSONSink: BatchSink {
    private let receipts: OutputFile
    private var done = false

    public convenience init(directory: String, unit: CommitUnit? = nil) throws(SinkError) {
        try self.init(files: .single(directory, .ndjson, unit: unit))
    }

    /// `files.transactions` is not used: the objects carry their purchases.
    init(files: TableFiles) throws(SinkError) {
        receipts = try OutputFile(directory: files.receipts.directory, name: files.receipts.name, unit: files.unit)
    }

    public func write(_ batch: ColumnBatch) throws(SinkError) {
        try NDJSONSink.checkLines(batch)
        try receipts.write(batch.ndjson)
    }

    /// Every record must appear exactly once: a batch whose rendered lines do not match its rows is a bug upstream,
    /// and writing it would lose or duplicate records silently.
    static func checkLines(_ batch: ColumnBatch) throws(SinkError) {
        var lines = 0
        for b in batch.ndjson where b == 0x0A { lines += 1 }
        if lines != batch.receipts.rowCount || (!batch.ndjson.isEmpty && batch.ndjson.last != 0x0A) {
            throw SinkError(
                .internalError,
                detail: "batch \(batch.sequence) has \(batch.receipts.rowCount) records but \(lines) NDJSON lines")
        }
    }

    public func finish() throws(SinkError) {
        guard !done else { return }
        done = true
        try receipts.commit()
    }

    public func abort() {
        done = true
        receipts.discard()
    }
}
