import CZstd
import ReceiptIO
import ReceiptSynth
import Testing

/// How a test frame is compressed (libzstd's advanced parameters).
struct FrameSpec {
    var level: Int32 = 3
    /// 0: libzstd's default for the level.
    var windowLog: Int32 = 0
    var checksum = false
    /// False: the frame header carries no content size (streamed compression), so the window is not shrunk to it.
    var knownSize = true
    /// Long-distance matching (`zstd --long`): a 128 MB window unless `windowLog` says otherwise.
    var long = false
}

/// Compresses `data` as one zstd frame made as `spec` says.
func encodeFrame(_ data: [UInt8], _ spec: FrameSpec = FrameSpec()) -> [UInt8] {
    let cctx = ZSTD_createCCtx()!
    defer { ZSTD_freeCCtx(cctx) }
    func set(_ p: ZSTD_cParameter, _ v: Int32) { precondition(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, p, v)) == 0) }
    set(ZSTD_c_compressionLevel, spec.level)
    if spec.windowLog > 0 { set(ZSTD_c_windowLog, spec.windowLog) }
    set(ZSTD_c_checksumFlag, spec.checksum ? 1 : 0)
    if spec.long { set(ZSTD_c_enableLongDistanceMatching, 1) }
    var out = [UInt8](repeating: 0, count: ZSTD_compressBound(data.count) + 1024)
    let written = out.withUnsafeMutableBytes { o in
        data.withUnsafeBytes { i in
            var outb = ZSTD_outBuffer(dst: o.baseAddress, size: o.count, pos: 0)
            var inb = ZSTD_inBuffer(src: i.baseAddress, size: i.count, pos: 0)
            // A first call that does not end the frame leaves its size out of the header.
            if !spec.knownSize {
                precondition(ZSTD_isError(ZSTD_compressStream2(cctx, &outb, &inb, ZSTD_e_continue)) == 0)
            }
            while true {
                let r = ZSTD_compressStream2(cctx, &outb, &inb, ZSTD_e_end)
                precondition(ZSTD_isError(r) == 0)
                if r == 0 { break }
            }
            return outb.pos
        }
    }
    return Array(out[0..<written])
}

/// A skippable frame (magic `0x184D2A5?`, little-endian length, payload), which decoders pass over.
func skippableFrame(_ payload: [UInt8], variant: UInt8 = 0) -> [UInt8] {
    let n = UInt32(payload.count)
    let size = (0..<4).map { UInt8(truncatingIfNeeded: n >> (8 * $0)) }
    return [0x50 | (variant & 0x0F), 0x2A, 0x4D, 0x18] + size + payload
}

/// Text of random lines with lengths drawn from `lengths` (blank lines, CRLF endings and spaces mixed in), where
/// every other stretch of `stretch` bytes repeats the one before it with a few changes: zstd then encodes
/// back-references about `stretch` bytes long, reaching across the reader's batches.
func repetitiveLines(bytes: Int, stretch: Int, lengths: ClosedRange<Int>, seed: UInt64) -> [UInt8] {
    var rng = SplitMix(seed: seed)
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/={}\":, ".utf8)
    func fresh(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + lengths.upperBound + 2)
        while out.count < count {
            let kind = rng.next() % 40
            if kind == 0 {
                out += [0x0A]
            } else if kind == 1 {
                out += Array(" \t\r\n".utf8)
            } else {
                let span = UInt64(lengths.upperBound - lengths.lowerBound + 1)
                let n = lengths.lowerBound + Int(rng.next() % span)
                for _ in 0..<n { out.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
                out += kind == 2 ? [0x0D, 0x0A] : [0x0A]
            }
        }
        return out
    }
    var text: [UInt8] = []
    text.reserveCapacity(bytes + stretch)
    while text.count < bytes {
        let piece = fresh(stretch)
        text += piece
        var copy = piece
        // A few changed bytes (never newlines), so the copy is many long matches rather than one.
        for _ in 0..<8 {
            let k = Int(rng.next() % UInt64(copy.count))
            if copy[k] != 0x0A { copy[k] = alphabet[Int(rng.next() % UInt64(alphabet.count))] }
        }
        text += copy
    }
    return text
}

/// In which order batches go back to the reader, as the pipeline's pool and workers might hand them.
enum BatchOrder: Sendable, CustomTestStringConvertible {
    /// One batch for every fill (the stage benchmark), its records read before the next fill.
    case same
    /// `held` filled batches stay out; the newest goes back first and is the next one filled (a LIFO pool).
    case lifo(held: Int)
    /// `held` filled batches stay out; the oldest goes back first, to the end of the queue.
    case fifo(held: Int)
    /// `held` filled batches stay out; a random one goes back first, to a random place.
    case shuffled(held: Int, seed: UInt64)

    var testDescription: String {
        switch self {
        case .same: "same batch"
        case .lifo(let h): "LIFO, \(h) held"
        case .fifo(let h): "FIFO, \(h) held"
        case .shuffled(let h, let s): "shuffled, \(h) held, seed \(s)"
        }
    }
}

/// Drains `reader` handing batches back in `order`. A batch's records are read only when it goes back, after
/// later fills: bytes the reader changed under a batch still held would show.
func readAll(_ reader: RecordReader, _ options: ReaderOptions, order: BatchOrder) throws -> ReadResult {
    let held: Int
    var rng = SplitMix(seed: 1)
    switch order {
    case .same: held = 0
    case .lifo(let h), .fifo(let h): held = h
    case .shuffled(let h, let s):
        held = h
        rng = SplitMix(seed: s)
    }
    var pool = (0...held).map { _ in
        RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch)
    }
    var out: [(Int, RecordBatch)] = []
    var parts: [Int: ReadResult] = [:]
    func giveBack() {
        let k: Int
        switch order {
        case .same, .lifo: k = out.count - 1
        case .fifo: k = 0
        case .shuffled: k = Int(rng.next() % UInt64(out.count))
        }
        let (sequence, batch) = out.remove(at: k)
        var part = ReadResult()
        part.batches = 1
        part.blankLines = batch.blankLines
        part.inputBytes = batch.inputBytes
        if !batch.records.isEmpty { part.formats.append(batch.format) }
        for i in batch.records.indices {
            let r = batch.records[i]
            part.records.append((r.line, batch.withRecord(i) { String(decoding: $0, as: UTF8.self) }, r.tooLarge))
        }
        parts[sequence] = part
        if case .shuffled = order {
            pool.insert(batch, at: Int(rng.next() % UInt64(pool.count + 1)))
        } else {
            pool.append(batch)
        }
    }
    var sequence = 0
    while true {
        precondition(sequence < 1_000_000, "reader does not terminate")
        if held > 0 && out.count >= held { giveBack() }
        let batch: RecordBatch
        switch order {
        case .fifo: batch = pool.removeFirst()
        default: batch = pool.removeLast()
        }
        guard try reader.fill(batch) else { break }
        out.append((sequence, batch))
        sequence += 1
        if case .same = order { giveBack() }
    }
    while !out.isEmpty { giveBack() }
    var all = ReadResult()
    for k in 0..<sequence {
        let p = parts[k]!
        all.records += p.records
        all.blankLines += p.blankLines
        all.inputBytes += p.inputBytes
        all.batches += 1
        all.formats += p.formats
    }
    return all
}
