import ReceiptModel

/// `--format csv`: `receipts.csv`, `transactions.csv` and `renewals.csv` (CSVEncoder's dialect; `raw`: string cells
/// byte for byte, formulas included).
public final class CSVSink: BatchSink {
    private let raw: Bool
    private let receipts: OutputFile
    private let transactions: OutputFile
    private let renewals: OutputFile
    private var scratch: [UInt8] = []
    private var done = false

    public convenience init(directory: String, raw: Bool = false, unit: CommitUnit? = nil) throws(SinkError) {
        try self.init(files: .single(directory, .csv, unit: unit), raw: raw)
    }

    init(files: TableFiles, raw: Bool = false) throws(SinkError) {
        self.raw = raw
        receipts = try OutputFile(directory: files.receipts.directory, name: files.receipts.name, unit: files.unit)
        do {
            transactions = try OutputFile(
                directory: files.transactions.directory, name: files.transactions.name, unit: files.unit)
        } catch {
            receipts.discard()
            throw error
        }
        do {
            renewals = try OutputFile(
                directory: files.renewals.directory, name: files.renewals.name, unit: files.unit)
        } catch {
            receipts.discard()
            transactions.discard()
            throw error
        }
        CSVEncoder.appendHeader(.receipts, into: &scratch)
        try receipts.write(scratch)
        scratch.removeAll(keepingCapacity: true)
        CSVEncoder.appendHeader(.transactions, into: &scratch)
        try transactions.write(scratch)
        scratch.removeAll(keepingCapacity: true)
        CSVEncoder.appendHeader(.renewals, into: &scratch)
        try renewals.write(scratch)
    }

    public func write(_ batch: ColumnBatch) throws(SinkError) {
        try append(batch.receipts, to: receipts)
        try append(batch.transactions, to: transactions)
        try append(batch.renewals, to: renewals)
    }

    /// Renders in slices so that the scratch buffer stays small whatever the batch size.
    private func append(_ table: ColumnTable, to file: OutputFile) throws(SinkError) {
        var start = 0
        while start < table.rowCount {
            let end = min(table.rowCount, start + 1024)
            scratch.removeAll(keepingCapacity: true)
            CSVEncoder.appendRows(table, rows: start..<end, raw: raw, into: &scratch)
            try file.write(scratch)
            start = end
        }
    }

    public func finish() throws(SinkError) {
        guard !done else { return }
        done = true
        do {
            try receipts.commit()
            try transactions.commit()
            try renewals.commit()
        } catch {
            transactions.discard()
            renewals.discard()
            throw error
        }
    }

    public func abort() {
        done = true
        receipts.discard()
        transactions.discard()
        renewals.discard()
    }
}
