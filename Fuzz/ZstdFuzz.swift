// libFuzzer entry for zstd input (ZstdByteSource and RecordReader, built by scripts/fuzz.sh): any byte string read
// as a zstd stream must give, decoded in place into the batches, exactly the records it gives streamed through
// libzstd's own window, or fail too, without crashing (the in-place path's preconditions guard its history).
// The message may differ: libzstd's reason for a corrupt block depends on how much output room the decoder had,
// which is not the same in its window and in a batch; a frame both cut short and corrupt may be reported as either;
// and when a file arrives a few bytes a read, the streaming decoder's verdict on an unknown header depends on how
// many bytes it saw first (the in-place path reads 18). Where libzstd itself gives a different verdict on the same
// frame fed whole and fed in pieces, the in-place read must agree with its verdict on the whole input.
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

/// Hides the zstd source's type: the reader then streams, as every zstd input did before in-place decoding.
final class Hidden: ByteSource {
    let inner: any ByteSource
    init(_ inner: any ByteSource) { self.inner = inner }
    var bytesConsumed: Int { inner.bytesConsumed }
    var knownSize: Int? { inner.knownSize }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int { try inner.read(into: buffer) }
}

/// 256 KB batches, 4 KB records, 64 records a batch: windows up to about 124 KB decode in place, carries are large.
let options = ReaderOptions(maxRecordSize: 4096, batchBytes: 256 << 10, maxRecordsPerBatch: 64)
/// Decompression bombs stop here: a read gives up after this many bytes of lines.
let lineBudget = 2 << 20

struct Result: Equatable {
    var records: [[UInt8]] = []
    var lines: [Int] = []
    var blankLines = 0
    var error: String? = nil
    /// The budget ran out: only the records so far are comparable.
    var cut = false
}

func readAll(_ data: UnsafeRawBufferPointer, inPlace: Bool, chunk: Int, strictEmpty: Bool = false) -> Result {
    var result = Result()
    do throws(InputError) {
        let zstd = try ZstdByteSource(FuzzBytes(data, chunk: chunk), name: "fuzz.zst")
        zstd.emptyCompressedBlocksAreCorrupt = strictEmpty
        let reader = RecordReader(source: inPlace ? zstd : Hidden(zstd), name: "fuzz.zst", options: options)
        let make = { RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch) }
        var pool = [make(), make()]
        var held: RecordBatch? = nil
        var seen = 0
        func drain(_ b: RecordBatch) {
            for i in b.records.indices {
                result.records.append(b.withRecord(i) { Array($0) })
                result.lines.append(b.records[i].line)
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
        // Where batches end differs between the paths, so what came before an error is not compared.
        result = Result(error: error.message)
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    // The last input byte picks how the file arrives: whole reads, or a few bytes at a time.
    let chunk = size > 0 && data[size - 1] & 1 == 1 ? 1 + Int(data[size - 1] >> 1) : 1 << 20
    var fast = readAll(input, inPlace: true, chunk: chunk)
    var slow = readAll(input, inPlace: false, chunk: chunk)
    if (fast.error == nil) != (slow.error == nil) {
        // libzstd's one-pass decoder rejects a compressed block of size 0 that its block-by-block decoder (and the
        // in-place path) passes over: the in-place read must then agree when it rejects such blocks too.
        fast = readAll(input, inPlace: true, chunk: chunk, strictEmpty: true)
        if (fast.error == nil) != (slow.error == nil) && chunk != 1 << 20 {
            // Fed in pieces, libzstd rejects an RLE block in a frame whose window is 0 bytes (it cannot hold the
            // block's byte), which it accepts fed whole: where libzstd's verdict depends on how the input
            // arrives, the in-place read must agree with its verdict on the whole input.
            let whole = readAll(input, inPlace: false, chunk: 1 << 20)
            if (whole.error == nil) != (slow.error == nil) {
                fast = readAll(input, inPlace: true, chunk: chunk)
                slow = whole
            }
        }
    }
    if fast.cut || slow.cut {
        let n = min(fast.records.count, slow.records.count)
        precondition(fast.records[..<n] == slow.records[..<n], "in place and streamed records differ")
        precondition(fast.lines[..<n] == slow.lines[..<n], "in place and streamed line numbers differ")
    } else if fast.error != nil && slow.error != nil {
        // Both failed; with whole reads the message must match, save libzstd's reason for corrupt data, and save
        // corrupt against truncated: in a frame that is both, which a decoder meets first depends on how far it
        // reads before it checks (libzstd's streaming decoder copies a raw block as its bytes arrive; the block path
        // checks a block's header before it waits for the body).
        if chunk == 1 << 20, fast.error != slow.error {
            let corrupt = "input 'fuzz.zst' is not a valid zstd stream ("
            let cut = "input 'fuzz.zst' ends in the middle of a zstd frame; the file is truncated"
            let bad = { (e: String) in e.hasPrefix(corrupt) || e == cut }
            precondition(bad(fast.error!) && bad(slow.error!), "reads fail differently")
        }
    } else {
        precondition(fast == slow, "in place and streamed reads differ")
    }
    return 0
}
