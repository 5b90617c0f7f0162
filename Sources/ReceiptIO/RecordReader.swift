#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Limits and sizes of the line reader.
public struct ReaderOptions: Sendable {
    /// Longest accepted line in bytes (terminator excluded); longer lines become `record_too_large` records.
    public var maxRecordSize: Int = 1 << 20
    /// Target batch size: a batch ends with the first whole line that reaches it. The buffer itself is larger when
    /// `maxRecordSize` needs it (`batchCapacity`), but only about this much of it is filled, which keeps the batch
    /// in cache between the reader and the worker.
    public var batchBytes: Int = 4 << 20
    /// At most this many records per batch, so that a batch of tiny lines keeps its column batch small.
    public var maxRecordsPerBatch: Int = 8192
    /// Whether the first bytes of the stream are checked (`InputSniffer`): another compression, an archive or
    /// binary data then fails the read with a message naming it. The export turns it on; tests of the reader's
    /// mechanics feed arbitrary bytes.
    public var rejectsUnreadableContent = false
    /// The receipt field names that make a first line a CSV header (`CSVHeader`); empty: no input is read as CSV.
    public var csvReceiptFields: [String] = CSVHeader.defaultReceiptFields

    public init(maxRecordSize: Int = 1 << 20, batchBytes: Int = 4 << 20, maxRecordsPerBatch: Int = 8192) {
        self.maxRecordSize = maxRecordSize
        self.batchBytes = batchBytes
        self.maxRecordsPerBatch = maxRecordsPerBatch
    }

    /// The buffer size a `RecordBatch` for these options needs.
    /// Twice the largest record, so that a carried tail always leaves room for a whole record after it.
    public var batchCapacity: Int { max(batchBytes, 2 * maxRecordSize + 2) }
}

/// Cuts one source into `RecordBatch`es of whole lines. A line that does not fit at the end of a batch moves to
/// the next; a line longer than `maxRecordSize` becomes a `tooLarge` record and is skipped without buffering it.
///
/// Not thread-safe: one reader thread owns it.
public final class RecordReader {
    let source: any ByteSource
    public let name: String
    public let sourceIndex: Int
    let options: ReaderOptions
    /// Unfinished bytes carried to the next batch: a partial line, or lines beyond `maxRecordsPerBatch`.
    var carry: UnsafeMutableRawPointer? = nil
    var carryCount = 0
    var line = 1
    /// A line longer than `maxRecordSize` is being dropped up to its newline...
    private var skipping = false
    /// ...and is so far only blanks: it becomes a blank line at its end, or a `tooLarge` record at its first other
    /// byte.
    private var skippingBlank = false
    var ended = false
    /// The first bytes of the stream until they are checked (`InputSniffer`); nil once they were.
    var head: [UInt8]?
    /// Whether the first line was checked for a CSV header.
    var headerChecked = false
    /// A CSV row longer than `maxRecordSize` is being dropped up to its end, in this state of its quotes.
    var csvSkipping = false
    var csvSkipState = CSVFramer.State.fieldStart
    public internal(set) var format: RecordFormat? = nil
    /// Lines numbered up to this one are still read (they count for line numbers and format detection) but make
    /// no record and no blank-line count: a resumed run starts after the last line its committed output covers.
    public var skipThroughLine = 0

    public init(source: any ByteSource, name: String, sourceIndex: Int = 0, options: ReaderOptions = ReaderOptions()) {
        precondition(options.maxRecordSize > 0 && options.maxRecordsPerBatch > 0)
        self.source = source
        self.name = name
        self.sourceIndex = sourceIndex
        self.options = options
        head = options.rejectsUnreadableContent ? [] : nil
    }

    deinit { carry?.deallocate() }

    /// Total size of the underlying file when known.
    public var knownSize: Int? { source.knownSize }
    public var bytesConsumed: Int { source.bytesConsumed }

    /// Fills `batch` (whose capacity must be at least `options.batchCapacity`) with the next records.
    /// Returns false when the source is exhausted and nothing was added.
    public func fill(_ batch: RecordBatch) throws(InputError) -> Bool {
        precondition(batch.capacity >= options.batchCapacity, "batch too small for the reader's options")
        batch.reset()
        batch.sourceIndex = sourceIndex
        batch.sourceName = name
        if ended && carryCount == 0 { return false }
        let buf = batch.storage
        let cap = batch.capacity
        let consumedBefore = source.bytesConsumed
        if !headerChecked { try readHeader(capacity: cap) }
        if case .csv(let header) = format { return try fillCSV(batch, header, consumedBefore: consumedBefore) }
        var filled = 0
        if carryCount > 0, let carry {
            // In range: carryCount <= cap (it came from a batch of the same capacity).
            buf.copyMemory(from: carry, byteCount: carryCount)
            filled = carryCount
            carryCount = 0
        }
        var scanned = 0
        var lineStart = 0
        let maxRecords = options.maxRecordsPerBatch
        let maxSize = options.maxRecordSize
        var full = false
        // Past the target, read in small steps: a line that crosses it then leaves little to carry.
        let target = min(options.batchBytes, cap)
        let step = 64 << 10

        scanning: while true {
            while scanned < filled {
                // In range: scanned < filled <= cap.
                let nl = memchr(buf + scanned, 0x0A, filled - scanned)
                if skipping && skippingBlank {
                    let end = nl.map { buf.distance(to: UnsafeMutableRawPointer($0)) } ?? filled
                    if !Self.isBlank(buf, scanned, end) {
                        // Not blank after all: the line is too large.
                        skippingBlank = false
                        if line > skipThroughLine {
                            batch.records.append(RecordSpan(offset: lineStart, length: 0, line: line, tooLarge: true))
                        }
                        if batch.records.count == maxRecords {
                            // The rest of the line (and what follows its newline) is carried to the next batch,
                            // which goes on skipping it.
                            full = true
                            break scanning
                        }
                    } else if nl != nil {
                        if line > skipThroughLine { batch.blankLines += 1 }
                        skippingBlank = false
                    }
                }
                if skipping {
                    guard let nl else {
                        // Drop the skipped bytes so that the buffer space can be read into again.
                        filled = lineStart
                        scanned = lineStart
                        break
                    }
                    let q = buf.distance(to: UnsafeMutableRawPointer(nl))
                    // Keep what follows the skipped line's newline.
                    let rest = filled - (q + 1)
                    if rest > 0 { memmove(buf + lineStart, buf + q + 1, rest) }
                    filled = lineStart + rest
                    scanned = lineStart
                    skipping = false
                    line += 1
                    continue
                }
                guard let nl else {
                    scanned = filled
                    // A line may be one byte over the limit while still unfinished: its last byte may be a `\r`.
                    if filled - lineStart > maxSize + 1 {
                        // A line of only blanks makes no record, whatever its length.
                        skippingBlank = Self.isBlank(buf, lineStart, filled)
                        if line > skipThroughLine && !skippingBlank {
                            batch.records.append(RecordSpan(offset: lineStart, length: 0, line: line, tooLarge: true))
                        }
                        skipping = true
                        filled = lineStart
                        scanned = lineStart
                        if batch.records.count == maxRecords {
                            full = true
                            break scanning
                        }
                    }
                    break
                }
                let q = buf.distance(to: UnsafeMutableRawPointer(nl))
                cut(batch, buf, lineStart, q)
                lineStart = q + 1
                scanned = lineStart
                if batch.records.count == maxRecords {
                    full = true
                    break scanning
                }
            }
            if ended { break }
            if filled == cap || lineStart >= target {
                full = true
                break
            }
            let end = filled < target ? target : min(cap, filled + step)
            let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buf + filled, count: end - filled))
            if head != nil { try sniff(buf + filled, n) }
            if n == 0 { ended = true } else { filled += n }
        }
        if full {
            carryTail(buf + lineStart, filled - lineStart, capacity: cap)
        } else {
            // The end of the source: the last line may lack its newline.
            if skipping {
                // A too-large last line without a newline: its record is out (or it was blank), so the line is done.
                if skippingBlank && line > skipThroughLine { batch.blankLines += 1 }
                line += 1
            } else if filled > lineStart {
                cut(batch, buf, lineStart, filled)
            }
            skipping = false
            skippingBlank = false
        }
        batch.inputBytes = source.bytesConsumed - consumedBefore
        // A line being skipped as too large already has its record; otherwise (a blank one being skipped included:
        // it is counted where it ends) the counter is one past the last line.
        batch.endLine = max(skipping && !skippingBlank ? line : line - 1, 0)
        batch.format = format ?? .base64
        return !batch.records.isEmpty || batch.blankLines > 0 || batch.inputBytes > 0 || !ended || carryCount > 0
    }

    /// Collects the first `InputSniffer.window` bytes read (`n == 0`: the end) and checks them once they are all
    /// there: an input that is another format or binary data fails before any of its records is used.
    func sniff(_ p: UnsafeMutableRawPointer, _ n: Int) throws(InputError) {
        guard var bytes = head else { return }
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: p, count: min(n, InputSniffer.window - bytes.count)))
        guard bytes.count >= InputSniffer.window || n == 0 else {
            head = bytes
            return
        }
        head = nil
        if let encoding = bytes.withUnsafeBytes({ InputSniffer.wideTextEncoding($0) }) {
            throw InputError(.wideText, input: name, reason: encoding)
        }
        let problem = bytes.withUnsafeBytes { InputSniffer.problem($0) }
        if let problem {
            throw InputError(.unsupportedContent, input: name, reason: problem)
        }
    }

    /// Records the line `buf[start..<end]` (terminator excluded) and advances the line counter.
    private func cut(_ batch: RecordBatch, _ buf: UnsafeMutableRawPointer, _ lineStart: Int, _ end: Int) {
        defer { line += 1 }
        var start = lineStart
        // A UTF-8 byte order mark (Windows tools, some database exports) is not part of the first record.
        // In range: start + 3 <= end <= capacity.
        if line == 1 && end - start >= 3 && buf.load(fromByteOffset: start, as: UInt8.self) == 0xEF
            && buf.load(fromByteOffset: start + 1, as: UInt8.self) == 0xBB
            && buf.load(fromByteOffset: start + 2, as: UInt8.self) == 0xBF
        {
            start += 3
        }
        var e = end
        // In range: start <= e - 1 < end <= capacity.
        if e > start && buf.load(fromByteOffset: e - 1, as: UInt8.self) == 0x0D { e -= 1 }
        let emit = line > skipThroughLine
        let i = Self.firstNonBlank(buf, start, e)
        if i == e {
            // Blank whatever its length: a blank line longer than the limit is not a record either.
            if emit { batch.blankLines += 1 }
            return
        }
        if e - start > options.maxRecordSize {
            if emit { batch.records.append(RecordSpan(offset: start, length: 0, line: line, tooLarge: true)) }
            return
        }
        if format == nil {
            format = buf.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "{") ? .ndjson : .base64
        }
        if emit { batch.records.append(RecordSpan(offset: start, length: e - start, line: line)) }
    }

    /// The offset of the first byte in `buf[start..<end]` that is not blank (a space, a tab or a carriage return),
    /// `end` when there is none. In range: the callers' `end` is at most the buffer's filled count.
    static func firstNonBlank(_ buf: UnsafeMutableRawPointer, _ start: Int, _ end: Int) -> Int {
        var i = start
        while i < end {
            let b = buf.load(fromByteOffset: i, as: UInt8.self)
            if b != 0x20 && b != 0x09 && b != 0x0D { return i }
            i += 1
        }
        return end
    }

    private static func isBlank(_ buf: UnsafeMutableRawPointer, _ start: Int, _ end: Int) -> Bool {
        firstNonBlank(buf, start, end) == end
    }

    func carryTail(_ from: UnsafeMutableRawPointer, _ count: Int, capacity: Int) {
        guard count > 0 else { return }
        if carry == nil { carry = .allocate(byteCount: capacity, alignment: 64) }
        carry!.copyMemory(from: from, byteCount: count)
        carryCount = count
    }
}

extension RecordReader {
    /// Opens `path` (`-` for standard input) with compression detected from content.
    public static func open(_ path: String, sourceIndex: Int = 0, options: ReaderOptions = ReaderOptions())
        throws(InputError) -> RecordReader
    {
        RecordReader(source: try InputOpener.open(path), name: path, sourceIndex: sourceIndex, options: options)
    }
}
