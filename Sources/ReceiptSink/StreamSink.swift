import ReceiptModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--out -`: the receipts table as CSV or NDJSON on a file descriptor (standard output), written and flushed per
/// batch so that a consumer sees rows as they are produced. Transactions are not written (NDJSON objects carry
/// them in `in_app`). Parquet cannot be streamed: its footer must be written last and readers seek to it.
public final class StreamSink: BatchSink {
    private let fd: Int32
    private let format: OutputFormat
    private let csvRaw: Bool
    private var scratch: [UInt8] = []
    private var headerWritten = false

    /// `csvRaw`: CSV string cells byte for byte (`CSVEncoder`).
    public init(format: OutputFormat, csvRaw: Bool = false, fileDescriptor: Int32 = 1) throws(SinkError) {
        guard format != .parquet else {
            throw SinkError(.parquetToStandardOutput)
        }
        self.format = format
        self.csvRaw = csvRaw
        fd = fileDescriptor
    }

    public func write(_ batch: ColumnBatch) throws(SinkError) {
        scratch.removeAll(keepingCapacity: true)
        switch format {
        case .csv:
            if !headerWritten {
                CSVEncoder.appendHeader(.receipts, into: &scratch)
                headerWritten = true
            }
            CSVEncoder.appendRows(batch.receipts, rows: 0..<batch.receipts.rowCount, raw: csvRaw, into: &scratch)
            try emit(scratch)
        case .ndjson:
            try NDJSONSink.checkLines(batch)
            try emit(batch.ndjson)
        case .parquet:
            break
        }
    }

    private func emit(_ bytes: [UInt8]) throws(SinkError) {
        var failed = false
        bytes.withUnsafeBytes { p in
            var done = 0
            while done < p.count {
                let n = posixWrite(fd, p.baseAddress! + done, p.count - done)  // done < count: in range
                if n < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    return
                }
                done += n
            }
        }
        if failed { throw SinkError.system(.write, "standard output") }
    }

    /// A CSV stream of an empty input still gets its header.
    public func finish() throws(SinkError) {
        if format == .csv && !headerWritten {
            scratch.removeAll(keepingCapacity: true)
            CSVEncoder.appendHeader(.receipts, into: &scratch)
            headerWritten = true
            try emit(scratch)
        }
    }

    /// Rows already written cannot be taken back from a stream.
    public func abort() {}
}
