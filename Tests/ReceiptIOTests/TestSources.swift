import ReceiptIO

/// An in-memory `ByteSource` that hands out at most `chunk` bytes per read, to put chunk edges anywhere.
final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private let chunk: Int
    private var pos = 0

    init(_ bytes: [UInt8], chunk: Int = 1 << 20) {
        self.bytes = bytes
        self.chunk = chunk
    }

    convenience init(_ text: String, chunk: Int = 1 << 20) { self.init(Array(text.utf8), chunk: chunk) }

    var bytesConsumed: Int { pos }
    var knownSize: Int? { bytes.count }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let n = min(buffer.count, chunk, bytes.count - pos)
        for k in 0..<n { buffer[k] = bytes[pos + k] }
        pos += n
        return n
    }
}

/// Drains a reader into (line, text, tooLarge) triples plus totals, using batches of the given options.
struct ReadResult {
    var records: [(line: Int, text: String, tooLarge: Bool)] = []
    var blankLines = 0
    var batches = 0
    var inputBytes = 0
    var formats: [RecordFormat] = []
}

func readAll(_ reader: RecordReader, _ options: ReaderOptions) throws -> ReadResult {
    let batch = RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch)
    var result = ReadResult()
    var guardCount = 0
    while try reader.fill(batch) {
        guardCount += 1
        precondition(guardCount < 1_000_000, "reader does not terminate")
        result.batches += 1
        result.blankLines += batch.blankLines
        result.inputBytes += batch.inputBytes
        if !batch.records.isEmpty { result.formats.append(batch.format) }
        for i in batch.records.indices {
            let r = batch.records[i]
            let text = batch.withRecord(i) { String(decoding: $0, as: UTF8.self) }
            result.records.append((r.line, text, r.tooLarge))
        }
    }
    return result
}
