// libFuzzer entry for CSV input (RecordReader's CSV rows and CSVRowScanner, built by scripts/fuzz.sh): any bytes
// after a header line naming the receipt field are cut into exactly the rows RFC 4180 gives (a reference written
// apart from the reader), with the same line numbers, too-large rows and blank lines, in any arrival; every row
// splits into cells that lie inside it; no crash, no hang, no read outside a buffer.

/// The fuzz input after a CSV header, in reads of at most `chunk` bytes.
final class FuzzBytes: ByteSource {
    let bytes: [UInt8]
    let chunk: Int
    var pos = 0
    init(_ bytes: [UInt8], chunk: Int) {
        self.bytes = bytes
        self.chunk = chunk
    }
    var bytesConsumed: Int { pos }
    var knownSize: Int? { bytes.count }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let n = min(buffer.count, chunk, bytes.count - pos)
        for k in 0..<n { buffer[k] = bytes[pos + k] }
        pos += n
        return n
    }
}

/// Small records and batches: rows cross batch ends and the size limit often.
let options = ReaderOptions(maxRecordSize: 64, batchBytes: 256, maxRecordsPerBatch: 4)
let header = Array("id,receipt_data\n".utf8)

struct Row: Equatable {
    var line: Int
    var bytes: [UInt8]
    var tooLarge: Bool
}

/// The rows of `body` by RFC 4180 alone: a quote opens a quoted field only at a field's start, a row ends at a
/// line feed outside quotes, a `\r` before it is dropped, a row longer than the limit is too large, a one-line row
/// of only blanks is a blank line.
func reference(_ body: ArraySlice<UInt8>) -> ([Row], Int) {
    var rows: [Row] = []
    var blanks = 0
    var line = 2
    var i = body.startIndex
    while i < body.endIndex {
        var j = i
        var fieldStart = true
        var quoted = false
        var inner = 0
        while j < body.endIndex {
            let b = body[j]
            if quoted {
                if b == 0x22 {
                    if j + 1 < body.endIndex && body[j + 1] == 0x22 {
                        j += 2
                        continue
                    }
                    quoted = false
                    fieldStart = false
                } else if b == 0x0A {
                    inner += 1
                }
            } else if b == 0x0A {
                break
            } else if b == 0x2C {
                fieldStart = true
            } else {
                if b == 0x22 && fieldStart { quoted = true }
                fieldStart = false
            }
            j += 1
        }
        var e = j
        if e > i && body[e - 1] == 0x0D { e -= 1 }
        if e - i > options.maxRecordSize {
            rows.append(Row(line: line, bytes: [], tooLarge: true))
        } else if inner == 0 && body[i..<e].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
            blanks += 1
        } else {
            rows.append(Row(line: line, bytes: Array(body[i..<e]), tooLarge: false))
        }
        line += inner + 1
        i = j + 1
    }
    return (rows, blanks)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    // The last input byte picks how the file arrives: whole reads, or a few bytes at a time.
    let chunk = size > 0 && data[size - 1] & 1 == 1 ? 1 + Int(data[size - 1] >> 1) : 1 << 20
    let reader = RecordReader(source: FuzzBytes(header + body, chunk: chunk), name: "fuzz.csv", options: options)
    let batch = RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch)
    var rows: [Row] = []
    var blanks = 0
    var lastEnd = 0
    var scanner: CSVRowScanner? = nil
    do throws(InputError) {
        while try reader.fill(batch) {
            precondition(rows.count <= size + 1, "more rows than bytes")
            guard case .csv(let h) = batch.format else { preconditionFailure("a CSV header read as another format") }
            if scanner == nil { scanner = CSVRowScanner(header: h, named: ["id", "receipt_data", nil]) }
            precondition(batch.endLine >= lastEnd, "a batch ends before the one before it")
            lastEnd = batch.endLine
            for i in batch.records.indices {
                let r = batch.records[i]
                let bytes = batch.withRecord(i) { row -> [UInt8] in
                    let record = scanner!.scan(row)
                    if record.error == nil {
                        precondition(record.receipt.range.upperBound <= row.count, "a receipt cell outside its row")
                    }
                    for k in 0..<3 {
                        if let cell = scanner!.cell(k) { precondition(cell.range.upperBound <= row.count) }
                    }
                    return Array(row)
                }
                precondition(r.line <= batch.endLine || r.tooLarge, "a row after its batch's end line")
                rows.append(Row(line: r.line, bytes: bytes, tooLarge: r.tooLarge))
            }
            blanks += batch.blankLines
        }
    } catch {
        preconditionFailure("an in-memory CSV input failed: \(error.message)")
    }
    let (want, wantBlanks) = reference(body[...])
    precondition(rows == want, "rows differ from RFC 4180's")
    precondition(blanks == wantBlanks, "blank lines differ")
    return 0
}
