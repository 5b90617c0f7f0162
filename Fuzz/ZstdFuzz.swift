// libFuzzer entry for zstd input (ZstdByteSource and RecordReader, built by scripts/fuzz.sh): any byte string read
// as a zstd stream through the reader's batches must give exactly the lines of what the source decodes (read on
// its own, with the same arrival), or fail too, with one of the reader's messages, and without crashing.
// Batches go back to the reader LIFO with one held out, the order that hands a reader its last buffer again.

/// The fuzz input as a source, in reads of at most `chunk` bytes.
final class FuzzBytes: ByteSource {
    let bytes: UnsafeRawBufferPointer
    let chunk: Int
    var pos = 0
    init(_ bytes: UnsafeRawBufferPointer, chunk: Int) {
        self.bytes = bytes
        self.chunk = chunk
    }
    var bytesConsumed: Int { pos }
    var knownSize: Int? { bytes.count }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let n = min(buffer.count, chunk, bytes.count - pos)
        // In range: n bytes from pos lie in the input and fit the buffer.
        if n > 0 { buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + pos, byteCount: n) }
        pos += n
        return n
    }
}

/// 256 KB batches, 4 KB records, 64 records a batch: carries are large and batches end often. CSV rows are the
/// `csv` target's: here every input is lines, whatever its first line says.
let options: ReaderOptions = {
    var o = ReaderOptions(maxRecordSize: 4096, batchBytes: 256 << 10, maxRecordsPerBatch: 64)
    o.csvReceiptFields = []
    return o
}()
/// Decompression bombs stop here: a read gives up after this many bytes of lines.
let lineBudget = 2 << 20

struct Result: Equatable {
    var records: [[UInt8]] = []
    var lines: [Int] = []
    var tooLarge: [Bool] = []
    var blankLines = 0
    var error: String? = nil
    /// The budget ran out: only the records so far are comparable.
    var cut = false
}

/// The input through `ZstdByteSource` and `RecordReader`.
func readRecords(_ data: UnsafeRawBufferPointer, chunk: Int) -> Result {
    var result = Result()
    do throws(InputError) {
        let zstd = try ZstdByteSource(FuzzBytes(data, chunk: chunk), name: "fuzz.zst")
        let reader = RecordReader(source: zstd, name: "fuzz.zst", options: options)
        let make = { RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch) }
        var pool = [make(), make()]
        var held: RecordBatch? = nil
        var seen = 0
        func drain(_ b: RecordBatch) {
            for i in b.records.indices {
                result.records.append(b.withRecord(i) { Array($0) })
                result.lines.append(b.records[i].line)
                result.tooLarge.append(b.records[i].tooLarge)
                seen += b.records[i].length + 1
            }
            result.blankLines += b.blankLines
            seen += b.blankLines
        }
        while true {
            let batch = pool.removeLast()
            guard try reader.fill(batch) else { break }
            // The batch filled before this one goes back now, on top: the next fill gets it.
            if let h = held {
                drain(h)
                pool.append(h)
            }
            held = batch
            if seen > lineBudget {
                result.cut = true
                break
            }
        }
        if let h = held { drain(h) }
    } catch {
        // Where batches end depends on the reader, so what came before an error is not compared.
        result = Result(error: error.message)
    }
    return result
}

/// The reference: the source's bytes read on their own (at most the budget and a little more), split into lines by
/// the reader's rules (a `\r` before the newline dropped, blank lines of spaces, tabs and `\r` counted, lines longer
/// than `maxRecordSize` kept as empty too-large records, a last line without a newline kept).
func referenceRecords(_ data: UnsafeRawBufferPointer, chunk: Int) -> Result {
    var result = Result()
    var text: [UInt8] = []
    do throws(InputError) {
        let zstd = try ZstdByteSource(FuzzBytes(data, chunk: chunk), name: "fuzz.zst")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while text.count <= 2 * lineBudget {
            let n = try zstd.read(into: buffer)
            if n == 0 { break }
            text += buffer[..<n]
        }
    } catch {
        return Result(error: error.message)
    }
    var line = 1
    var start = 0
    while start < text.count {
        let end = text[start...].firstIndex(of: 0x0A) ?? text.count
        var e = end
        if e > start && text[e - 1] == 0x0D { e -= 1 }
        if e - start > options.maxRecordSize {
            result.records.append([])
            result.lines.append(line)
            result.tooLarge.append(true)
        } else if text[start..<e].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
            result.blankLines += 1
        } else {
            result.records.append(Array(text[start..<e]))
            result.lines.append(line)
            result.tooLarge.append(false)
        }
        line += 1
        start = end + 1
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    // The last input byte picks how the file arrives: whole reads, or a few bytes at a time.
    let chunk = size > 0 && data[size - 1] & 1 == 1 ? 1 + Int(data[size - 1] >> 1) : 1 << 20
    let got = readRecords(input, chunk: chunk)
    let want = referenceRecords(input, chunk: chunk)
    if let e = got.error {
        precondition(e.hasPrefix("input 'fuzz.zst' "), "an error that does not name the input: \(e)")
        precondition(want.error != nil, "the reader fails where the source alone does not: \(e)")
    } else if got.cut {
        // A bomb: the records the reader gave before the budget ran out are the reference's first ones.
        let n = got.records.count
        precondition(want.error != nil || want.records.count >= n, "the reader gave more records than the source")
        if want.error == nil {
            precondition(Array(want.records[..<n]) == got.records, "records differ from the source's lines")
            precondition(Array(want.lines[..<n]) == got.lines, "line numbers differ from the source's lines")
        }
    } else {
        precondition(want.error == nil, "the reader accepts what the source alone rejects")
        precondition(got == want, "records differ from the source's lines")
    }
    return 0
}
