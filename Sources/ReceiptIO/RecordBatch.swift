/// How the lines of one source hold receipts, detected from its first line (a CSV header) or else its first
/// non-blank byte.
public enum RecordFormat: Sendable, Equatable {
    /// One JSON object per line, the receipt a base64 string under a key (`{` first).
    case ndjson
    /// One base64 receipt per line.
    case base64
    /// CSV rows under this header (RFC 4180): one record per row, which may span lines.
    case csv(CSVHeader)
}

/// Where one record lies in its batch's buffer.
public struct RecordSpan: Sendable, Equatable {
    /// Byte offset of the line in the batch buffer.
    public var offset: Int
    /// Line length without its terminator (`\n` or `\r\n`); 0 for a `tooLarge` record, whose bytes were skipped.
    public var length: Int
    /// 1-based line number within the decompressed source.
    public var line: Int
    /// The line exceeded the maximum record size; its bytes were never buffered.
    public var tooLarge: Bool

    public init(offset: Int, length: Int, line: Int, tooLarge: Bool = false) {
        self.offset = offset
        self.length = length
        self.line = line
        self.tooLarge = tooLarge
    }
}

/// The memory behind a `RecordBatch`, freed with it.
final class BatchBuffer: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 64)
    }

    deinit { base.deallocate() }
}

/// A few MB of raw input lines from one source in one contiguous buffer, cut in place, with one span per record.
///
/// Allocated once and reused: the pipeline hands a batch to exactly one stage at a time (reader, then a worker),
/// which is why it is `@unchecked Sendable`. Only the reader writes the buffer; every other stage reads it.
public final class RecordBatch: @unchecked Sendable {
    /// Buffer size in bytes.
    public let capacity: Int
    /// The buffer.
    let buffer: BatchBuffer
    /// `buffer.base`, kept here so that reading a record does not go through the buffer object.
    let storage: UnsafeMutableRawPointer
    /// The records, in input order.
    public internal(set) var records: [RecordSpan] = []
    /// Position of this batch in the whole run (all sources); the writer emits batches in this order.
    public var sequence: Int = 0
    /// Index of the source in the run's input list, and its name as given on the command line (`-` for stdin).
    public internal(set) var sourceIndex: Int = 0
    public internal(set) var sourceName: String = ""
    /// Meaningful when `records` is not empty.
    public internal(set) var format: RecordFormat = .base64
    /// Bytes of the underlying input (compressed bytes for zstd) consumed while filling this batch.
    public internal(set) var inputBytes: Int = 0
    /// Blank lines seen in this batch (counted, but they make no record).
    public internal(set) var blankLines: Int = 0
    /// Every line of the source numbered up to this one has been accounted for (as a record or a blank line) by
    /// this batch or an earlier one, and no later line: where a resumed run may start after this batch.
    public internal(set) var endLine: Int = 0

    public init(capacity: Int, maxRecords: Int) {
        precondition(capacity > 0 && maxRecords > 0)
        self.capacity = capacity
        buffer = BatchBuffer(capacity: capacity)
        storage = buffer.base
        records.reserveCapacity(maxRecords)
    }

    func reset() {
        records.removeAll(keepingCapacity: true)
        inputBytes = 0
        blankLines = 0
    }

    /// The bytes of record `i` (empty for a `tooLarge` record), valid only inside `body`.
    @inlinable public func withRecord<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let r = records[i]
        return try withBytes(r.offset, r.length, body)
    }

    @usableFromInline func withBytes<R>(_ offset: Int, _ length: Int, _ body: (UnsafeRawBufferPointer) throws -> R)
        rethrows -> R
    {
        // In range: spans are cut by the reader inside [0, capacity).
        try body(UnsafeRawBufferPointer(start: storage + offset, count: length))
    }
}
