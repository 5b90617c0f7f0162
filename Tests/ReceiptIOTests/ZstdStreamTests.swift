import CSIMD
import Foundation
import ReceiptSynth
import ReceiptTestSupport
import Testing

@testable import ReceiptIO

/// One record as the tests compare them.
private struct Line: Equatable {
    var line: Int
    var text: String
    var tooLarge: Bool
}

/// Everything a whole read gives: the records and totals, or the error that stopped it.
private struct Outcome: Equatable {
    var lines: [Line] = []
    var blankLines = 0
    var inputBytes = 0
    var error: String? = nil
}

/// Checks that two outcomes are equal, naming the first record that differs (whole outcomes are too large to print).
private func expectEqual(
    _ a: Outcome, _ b: Outcome, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(a.error == b.error, "\(what)", sourceLocation: sourceLocation)
    #expect(a.blankLines == b.blankLines, "\(what)", sourceLocation: sourceLocation)
    #expect(a.inputBytes == b.inputBytes, "\(what)", sourceLocation: sourceLocation)
    #expect(a.lines.count == b.lines.count, "\(what)", sourceLocation: sourceLocation)
    if let (k, (x, y)) = zip(a.lines, b.lines).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
        let show = { (l: Line) in
            "line \(l.line) tooLarge \(l.tooLarge) \(l.text.utf8.count) bytes \(l.text.prefix(40))"
        }
        Issue.record("\(what): record \(k) differs: \(show(x)) vs \(show(y))", sourceLocation: sourceLocation)
    }
}

/// Checks that two reads of the same input agree: the same records, or the same failure. Corrupt data fails on both
/// paths, but libzstd's reason may differ (it depends on how much output room the decoder had at the bad block,
/// which differs between libzstd's window and a batch), so two corruption reports count as the same failure; so do
/// a corruption report and a truncation report, for a frame that is both (which one a decoder meets first depends
/// on how far it reads before it checks: libzstd's streaming decoder copies a raw block as its bytes arrive, the
/// block path checks a block's header before it waits for the body). Cuts of valid frames are compared exactly
/// (`truncatedStreamsFailAsTheyAlwaysDid`).
private func expectSameVerdict(
    _ a: Outcome, _ b: Outcome, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    let corrupt = "input 't.zst' is not a valid zstd stream ("
    let cut = "input 't.zst' ends in the middle of a zstd frame; the file is truncated"
    let bad = { (e: String) in e.hasPrefix(corrupt) || e == cut }
    if let e = a.error, let f = b.error, e != f, bad(e), bad(f) { return }
    expectEqual(a, b, what, sourceLocation: sourceLocation)
}

/// What one read of a compressed input gave, and how many of its frames were decoded in place.
private struct Run {
    var outcome: Outcome
    var framesInPlace: Int
    /// The largest window the reader decodes in place (0 when it streams).
    var windowLimit: Int
}

/// Reads `compressed` through a `RecordReader`: in place (it is given the `ZstdByteSource` itself) or streamed (the
/// source behind a plain `ByteSource`, the path every zstd input took before).
private func read(
    _ compressed: [UInt8], _ options: ReaderOptions, inPlace: Bool, order: BatchOrder = .same, chunk: Int = 1 << 20,
    strictEmpty: Bool = false
) -> Run {
    var run = Run(outcome: Outcome(), framesInPlace: 0, windowLimit: 0)
    do {
        let zstd = try ZstdByteSource(MemoryByteSource(compressed, chunk: chunk), name: "t.zst")
        zstd.emptyCompressedBlocksAreCorrupt = strictEmpty
        let reader = RecordReader(source: inPlace ? zstd : OpaqueByteSource(zstd), name: "t.zst", options: options)
        run.windowLimit = reader.inPlace?.windowLimit ?? 0
        defer { run.framesInPlace = zstd.framesInPlace }
        let r = try readAll(reader, options, order: order)
        run.outcome.lines = r.records.map { Line(line: $0.line, text: $0.text, tooLarge: $0.tooLarge) }
        run.outcome.blankLines = r.blankLines
        run.outcome.inputBytes = r.inputBytes
    } catch let e as InputError {
        run.outcome.error = e.message
    } catch {
        run.outcome.error = "unexpected \(error)"
    }
    return run
}

/// The records of the uncompressed text, read by the reader from memory (no zstd at all).
private func plain(_ text: [UInt8], _ options: ReaderOptions) throws -> Outcome {
    let r = try readAll(RecordReader(source: MemoryByteSource(text), name: "t", options: options), options)
    return Outcome(
        lines: r.records.map { Line(line: $0.line, text: $0.text, tooLarge: $0.tooLarge) }, blankLines: r.blankLines,
        inputBytes: 0)
}

/// Checks that the in-place read of `compressed` (the decompression of `text`) gives exactly the streamed read and
/// the plain text's records, and that `inPlaceFrames` frames took the in-place path.
private func expectSame(
    _ text: [UInt8], _ compressed: [UInt8], _ options: ReaderOptions, order: BatchOrder, inPlaceFrames: Int? = nil,
    chunk: Int = 1 << 20, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let fast = read(compressed, options, inPlace: true, order: order, chunk: chunk)
    let slow = read(compressed, options, inPlace: false, chunk: chunk)
    #expect(fast.outcome.error == nil, sourceLocation: sourceLocation)
    #expect(slow.framesInPlace == 0, sourceLocation: sourceLocation)
    #expect(fast.framesInPlace == (inPlaceFrames ?? 1), sourceLocation: sourceLocation)
    #expect(fast.outcome.inputBytes == compressed.count, sourceLocation: sourceLocation)
    expectEqual(fast.outcome, slow.outcome, "in place vs streamed", sourceLocation: sourceLocation)
    var want = try plain(text, options)
    want.inputBytes = compressed.count
    expectEqual(fast.outcome, want, "in place vs the text", sourceLocation: sourceLocation)
}

/// Batches of 1 MB: in-place decoding for windows up to about 830 KB.
private let small = ReaderOptions(maxRecordSize: 64 << 10, batchBytes: 1 << 20)

private let orders: [BatchOrder] = [
    .same, .lifo(held: 1), .lifo(held: 3), .fifo(held: 1), .fifo(held: 3), .shuffled(held: 4, seed: 7),
]

@Suite struct ZstdInPlaceTests {
    /// A frame with a 256 MB window (`zstd --long=28`) is valid but beyond what the reader keeps: both paths refuse it
    /// with a message that says so, not one that suggests a truncated file.
    @Test func aWindowBeyond128MBIsRefusedAsSuch() throws {
        let text = repetitiveLines(bytes: 200_000, stretch: 50_000, lengths: 10...200, seed: 7)
        let compressed = encodeFrame(text, FrameSpec(windowLog: 28, knownSize: false))
        #expect(frameWindow(compressed) == 1 << 28)
        for inPlace in [true, false] {
            let run = read(compressed, ReaderOptions(), inPlace: inPlace)
            let message = try #require(run.outcome.error)
            #expect(message.contains("window larger than 128 MB"), "\(message)")
            #expect(!message.contains("complete"), "\(message)")
        }
    }

    @Test(arguments: orders)
    func backReferencesAcrossBatchesSurviveAnyReturnOrder(order: BatchOrder) throws {
        // 512 KB window, text that repeats 400 KB stretches: matches reach into the previous batch.
        let text = repetitiveLines(bytes: 3 << 20, stretch: 400 << 10, lengths: 20...3000, seed: 11)
        let compressed = encodeFrame(text, FrameSpec(windowLog: 19))
        #expect(frameWindow(compressed)! == 1 << 19)
        try expectSame(text, compressed, small, order: order)
    }

    @Test(arguments: [BatchOrder.same, .lifo(held: 1), .fifo(held: 5)])
    func defaultOptionsWithTheDefaultWindowOfLevel3(order: BatchOrder) throws {
        // What receiptflow meets in practice: 4 MB batches, a 2 MB window (zstd -3 on a large input).
        let text = repetitiveLines(bytes: 9 << 20, stretch: 1_900 << 10, lengths: 200...9000, seed: 4)
        let compressed = encodeFrame(text, FrameSpec(knownSize: false))
        #expect(frameWindow(compressed)! == 2 << 20)
        try expectSame(text, compressed, ReaderOptions(), order: order)
    }

    @Test(arguments: [BatchOrder.same, .lifo(held: 2), .fifo(held: 2), .shuffled(held: 3, seed: 2)])
    func framesOfEveryKindInOneStream(order: BatchOrder) throws {
        let text = repetitiveLines(bytes: 6 << 20, stretch: 300 << 10, lengths: 1...5000, seed: 5)
        let specs = [
            FrameSpec(windowLog: 19),
            FrameSpec(windowLog: 18, checksum: true),
            FrameSpec(windowLog: 19, knownSize: false),
            // Windows larger than a batch can guarantee: streamed.
            FrameSpec(windowLog: 22, knownSize: false),
            FrameSpec(checksum: true, knownSize: false, long: true),
            FrameSpec(level: 1),
            FrameSpec(level: 12, windowLog: 20, checksum: true, knownSize: false),
        ]
        let skippable: [[UInt8]] = [[], Array("skip me".utf8), [UInt8](repeating: 0x0A, count: 300 << 10)]
        var rng = SplitMix(seed: 9)
        var compressed: [UInt8] = []
        var inPlace = 0
        var start = 0
        var k = 0
        let limit = read([], small, inPlace: true).windowLimit
        #expect(limit > 512 << 10 && limit < 1 << 20)
        while start < text.count {
            // Frames cut anywhere in a line, empty ones included.
            let size = k % 9 == 4 ? 0 : min(Int(rng.next() % (900 << 10)), text.count - start)
            let frame = encodeFrame(Array(text[start..<(start + size)]), specs[k % specs.count])
            if frameWindow(frame)! <= limit { inPlace += 1 }
            compressed += frame
            if k % 3 == 1 { compressed += skippableFrame(skippable[k % skippable.count], variant: UInt8(k)) }
            start += size
            k += 1
        }
        #expect(inPlace >= 5 && inPlace < k)
        try expectSame(text, compressed, small, order: order, inPlaceFrames: inPlace, chunk: 40_001)
    }

    @Test func aSourceThatDeliversAFewBytesAtATime() throws {
        let text = repetitiveLines(bytes: 1 << 20, stretch: 100 << 10, lengths: 1...400, seed: 8)
        let compressed =
            encodeFrame(Array(text[..<300_000]), FrameSpec(windowLog: 18, checksum: true))
            + skippableFrame(Array("x".utf8)) + encodeFrame(Array(text[300_000...]), FrameSpec(windowLog: 19))
        try expectSame(text, compressed, small, order: .lifo(held: 1), inPlaceFrames: 2, chunk: 3)
    }

    @Test(arguments: [BatchOrder.same, .lifo(held: 1), .fifo(held: 3)])
    func tinyLinesForceLargeCarries(order: BatchOrder) throws {
        // 300 records per batch of a few bytes each: the rest of what a batch decoded is carried, batches that
        // only cut their carry follow, and a batch that stops early keeps decoding until its segment is a window.
        let options = ReaderOptions(maxRecordSize: 64 << 10, batchBytes: 1 << 20, maxRecordsPerBatch: 300)
        let a = repetitiveLines(bytes: 1 << 20, stretch: 100 << 10, lengths: 1...12, seed: 3)
        let b = repetitiveLines(bytes: 1 << 20, stretch: 200 << 10, lengths: 0...6, seed: 13)
        let compressed =
            encodeFrame(a, FrameSpec(windowLog: 18)) + encodeFrame(b, FrameSpec(windowLog: 19, knownSize: false))
        try expectSame(a + b, compressed, options, order: order, inPlaceFrames: 2)
    }

    @Test(arguments: [BatchOrder.same, .lifo(held: 2)])
    func recordsLongerThanABlockAndLinesOverTheLimit(order: BatchOrder) throws {
        // Records up to 256 KB (two blocks); longer lines are skipped in place, some longer than a whole batch.
        let options = ReaderOptions(maxRecordSize: 256 << 10, batchBytes: 1 << 20)
        var text = repetitiveLines(bytes: 3 << 20, stretch: 450 << 10, lengths: 1000...300_000, seed: 21)
        text += [UInt8](repeating: 0x41, count: 1_500_000) + [0x0A] + Array("short\r\n".utf8)
        text += repetitiveLines(bytes: 1 << 20, stretch: 200 << 10, lengths: 10...200_000, seed: 22)
        text += [UInt8](repeating: 0x42, count: 1_200_000)
        let compressed = encodeFrame(text, FrameSpec(windowLog: 19, checksum: true))
        let tooLarge = try plain(text, options).lines.filter(\.tooLarge).count
        #expect(tooLarge >= 4)
        try expectSame(text, compressed, options, order: order)
    }

    @Test func truncatedStreamsFailAsTheyAlwaysDid() throws {
        let text = repetitiveLines(bytes: 1_500_000, stretch: 200 << 10, lengths: 10...2000, seed: 6)
        let first = encodeFrame(Array(text[..<700_000]), FrameSpec(windowLog: 19, checksum: true))
        let second = encodeFrame(Array(text[700_000...]), FrameSpec(windowLog: 19, knownSize: false))
        let skip = skippableFrame(Array("between".utf8))
        let whole = first + skip + second
        var rng = SplitMix(seed: 12)
        let edges = [first.count, first.count + skip.count]
        var cuts = [1, 3, 4, 5, 6, 9, 14, first.count - 4, first.count - 1, first.count + 3, first.count + 9]
        cuts += edges + [edges[1] + 2, edges[1] + 7, whole.count - 3, whole.count - 1]
        cuts += (0..<25).map { _ in 1 + Int(rng.next() % UInt64(whole.count - 1)) }
        for cut in cuts {
            let input = Array(whole[..<cut])
            let fast = read(input, small, inPlace: true, order: .lifo(held: 1))
            let slow = read(input, small, inPlace: false)
            expectEqual(fast.outcome, slow.outcome, "cut at \(cut)")
            if edges.contains(cut) {
                #expect(fast.outcome.error == nil, "cut at \(cut)")
            } else {
                #expect(fast.outcome.error?.contains("ends in the middle of a zstd frame") == true, "cut at \(cut)")
            }
        }
    }

    @Test func corruptStreamsFailAsTheyAlwaysDid() throws {
        let text = repetitiveLines(bytes: 1_200_000, stretch: 150 << 10, lengths: 10...3000, seed: 14)
        let checked = encodeFrame(Array(text[..<500_000]), FrameSpec(windowLog: 18, checksum: true))
        let whole = checked + encodeFrame(Array(text[500_000...]), FrameSpec(windowLog: 19))
        var rng = SplitMix(seed: 15)
        for k in 0..<120 {
            // Even rounds: the checksummed frame alone, where any change after its header must be caught.
            var input = k % 2 == 0 ? checked : whole
            // Mostly one changed byte; now and then a run of garbage.
            let at = Int(rng.next() % UInt64(input.count))
            let count = k % 10 == 1 ? min(64, input.count - at) : 1
            for i in at..<(at + count) { input[i] ^= UInt8(truncatingIfNeeded: 1 + rng.next() % 255) }
            let fast = read(input, small, inPlace: true, order: .lifo(held: 1))
            let slow = read(input, small, inPlace: false)
            expectSameVerdict(fast.outcome, slow.outcome, "corrupt at \(at)")
            if k % 2 == 0 && at >= 20 {
                #expect(fast.outcome.error?.hasPrefix("input 't.zst' ") == true, "corrupt at \(at)")
            }
        }
    }

    @Test func anErrorStaysTheAnswerToEveryLaterRead() throws {
        let text = repetitiveLines(bytes: 600_000, stretch: 100 << 10, lengths: 10...500, seed: 16)
        let frame = encodeFrame(text, FrameSpec(windowLog: 18))
        let zstd = try ZstdByteSource(MemoryByteSource(Array(frame.dropLast(100))), name: "cut.zst")
        let reader = RecordReader(source: zstd, name: "cut.zst", options: small)
        let batch = RecordBatch(capacity: small.batchCapacity, maxRecords: small.maxRecordsPerBatch)
        var first: String? = nil
        do {
            while try reader.fill(batch) {}
        } catch {
            first = error.message
        }
        #expect(first?.contains("ends in the middle of a zstd frame") == true)
        #expect(zstd.framesInPlace == 1)
        for _ in 0..<2 {
            #expect(throws: InputError.self) { _ = try reader.fill(batch) }
            do {
                _ = try reader.fill(batch)
            } catch {
                #expect(error.message == first)
            }
        }
    }

    @Test func aFrameHoldingOtherThanItsDeclaredSizeIsCorrupt() {
        // Declares 3 bytes of content; one empty last block; the checksum of nothing.
        let short: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x03, 0x01, 0x00, 0x00, 0x99, 0xE9, 0xD8, 0x51]
        let corrupt =
            "input 't.zst' is not a valid zstd stream (Data corruption detected); check that the file is complete"
        #expect(read(short, small, inPlace: true).outcome.error == corrupt)
        #expect(read(short, small, inPlace: false).outcome.error == corrupt)
        #expect(read(short, small, inPlace: true).framesInPlace == 1)
        // Holds 12 bytes but declares 5 (the one-byte content size of a single-segment frame follows its descriptor).
        var long = encodeFrame(Array("hello world\n".utf8))
        #expect(long[4] & 0xE0 == 0x20 && long[5] == 12)
        long[5] = 5
        let fast = read(long, small, inPlace: true)
        #expect(fast.outcome.error?.hasPrefix("input 't.zst' is not a valid zstd stream (") == true)
        #expect(fast.framesInPlace == 1)
        expectSameVerdict(fast.outcome, read(long, small, inPlace: false).outcome, "declared 5 of 12")
        // The same short frame arriving a few bytes per read (a pipe): libzstd then decodes it block by block and
        // checks no declared size itself, so the streaming path must check it too (fuzz regression
        // declared-size-unchecked-in-pieces).
        for chunk in [1, 3, 7] {
            #expect(read(short, small, inPlace: true, chunk: chunk).outcome.error == corrupt, "chunk \(chunk)")
            #expect(read(short, small, inPlace: false, chunk: chunk).outcome.error == corrupt, "chunk \(chunk)")
        }
    }

    /// The committed fuzz corpus and crash regressions of the zstd target (Fuzz/corpus/zstd, Fuzz/regressions/zstd)
    /// with the target's options and verdict.
    @Test func fuzzCorpusAndRegressionsReadTheSameBothWays() throws {
        let options = ReaderOptions(maxRecordSize: 4096, batchBytes: 256 << 10, maxRecordsPerBatch: 64)
        var files = 0
        var inPlace = 0
        for kind in ["corpus", "regressions"] {
            let dir = Fixtures.packageRoot.appendingPathComponent("Fuzz/\(kind)/zstd")
            for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
            where !name.hasPrefix(".") {
                let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
                // As the fuzz target: the last byte picks whole reads or a few bytes a read.
                let last = bytes.last ?? 0
                let chunk = last & 1 == 1 ? 1 + Int(last >> 1) : 1 << 20
                var fast = read(bytes, options, inPlace: true, order: .lifo(held: 1), chunk: chunk)
                var slow = read(bytes, options, inPlace: false, chunk: chunk).outcome
                if (fast.outcome.error == nil) != (slow.error == nil) {
                    // As the fuzz target: libzstd's one-pass decoder rejects an empty compressed block that its
                    // block-by-block decoder and the in-place path pass over (regression empty-block-one-pass).
                    fast = read(bytes, options, inPlace: true, order: .lifo(held: 1), chunk: chunk, strictEmpty: true)
                    if (fast.outcome.error == nil) != (slow.error == nil) && chunk != 1 << 20 {
                        // And libzstd fed in pieces rejects what it accepts whole (regression
                        // rle-block-of-an-empty-window-in-pieces): then its verdict on the whole input counts.
                        let whole = read(bytes, options, inPlace: false).outcome
                        if (whole.error == nil) != (slow.error == nil) {
                            fast = read(bytes, options, inPlace: true, order: .lifo(held: 1), chunk: chunk)
                            slow = whole
                        }
                    }
                }
                // Read a few bytes at a time, the streaming decoder's verdict on an unknown header depends on how
                // many bytes it saw first: then two failures agree whatever they say.
                let bothFailInPieces = chunk != 1 << 20 && fast.outcome.error != nil && slow.error != nil
                if !bothFailInPieces { expectSameVerdict(fast.outcome, slow, name) }
                files += 1
                if fast.framesInPlace > 0 { inPlace += 1 }
            }
        }
        #expect(files >= 10)
        #expect(inPlace >= 5)
    }

    // MARK: - The block path (frame and block headers and the checksum read by ZstdByteSource)

    @Test(arguments: [BatchOrder.same, .lifo(held: 1), .fifo(held: 3)])
    func everyBlockTypeDecodesInPlace(order: BatchOrder) throws {
        // Random bytes (raw blocks: they do not compress), one byte repeated (RLE blocks), repetitive lines
        // (compressed blocks), and short stretches of each so that blocks of different types follow each other.
        var rng = SplitMix(seed: 31)
        let random = { (n: Int) in (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        var text = random(400 << 10) + [UInt8](repeating: 0x20, count: 300 << 10) + [0x0A]
        text += repetitiveLines(bytes: 600 << 10, stretch: 100 << 10, lengths: 10...2000, seed: 32)
        for k in 0..<12 { text += k % 2 == 0 ? random(150 << 10) : [UInt8](repeating: 0x2E, count: 140 << 10) }
        for checksum in [true, false] {
            let compressed = encodeFrame(text, FrameSpec(windowLog: 19, checksum: checksum))
            let types = Set(blockTypes(compressed))
            #expect(types == [0, 1, 2], "block types in the test frame: \(types.sorted())")
            try expectSame(text, compressed, small, order: order)
        }
    }

    @Test func aWrongChecksumIsCaughtInPlaceAsWhenStreamed() throws {
        let text = repetitiveLines(bytes: 700_000, stretch: 100 << 10, lengths: 10...900, seed: 33)
        let frame = encodeFrame(text, FrameSpec(windowLog: 18, checksum: true))
        #expect(read(frame, small, inPlace: true).outcome.error == nil)
        for k in 1...4 {
            for bit: UInt8 in [0x01, 0x80] {
                var bad = frame
                bad[bad.count - k] ^= bit
                let fast = read(bad, small, inPlace: true)
                let slow = read(bad, small, inPlace: false)
                #expect(fast.framesInPlace == 1)
                #expect(fast.outcome.error?.contains("checksum") == true, "byte -\(k): \(fast.outcome.error ?? "ok")")
                #expect(fast.outcome.error == slow.outcome.error, "byte -\(k)")
            }
        }
    }

    /// The checksum the block path computes (`rf_xxh64_*`, fed in pieces of random sizes) against the one libzstd
    /// writes at the end of a frame (the low 32 bits of XXH64 of the content, little-endian), on both paths: the
    /// portable loop and, when the CPU has it, the AVX-512 one (`rf_xxh64_update` takes the latter there). The
    /// two paths must also leave the same whole 64-bit digest.
    @Test(arguments: [0, 1] as [Int32])
    func theStreamingXXH64MatchesLibzstdsFrameChecksums(vector: Int32) {
        if vector == 1 && rf_xxh64_avx512_available() == 0 {
            // Without AVX-512 the vector request falls back to the portable loop, which the other case covers.
            print("skipped: this CPU has no AVX-512 (F, VL, DQ); the portable XXH64 loop is tested on its own")
            return
        }
        var rng = SplitMix(seed: 34)
        for n in Array(0...100) + [127, 128, 255, 256, 1000, 65_537, 300_001] {
            let data = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let frame = encodeFrame(data, FrameSpec(checksum: true))
            let stored = frame.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            // Small pieces (most updates go through the 32-byte carry) and large ones (long runs of stripes).
            for maxPiece in [70, 70_000] as [UInt64] {
                var state = rf_xxh64_state()
                var other = rf_xxh64_state()
                rf_xxh64_reset(&state)
                rf_xxh64_reset(&other)
                var at = 0
                data.withUnsafeBufferPointer { d in
                    while at < n {
                        let piece = min(n - at, Int(rng.next() % maxPiece))
                        rf_xxh64_update_path(&state, d.baseAddress! + at, piece, vector)
                        rf_xxh64_update_path(&other, d.baseAddress! + at, piece, 1 - vector)
                        at += piece
                    }
                }
                let digest = rf_xxh64_digest(&state)
                #expect(UInt32(truncatingIfNeeded: digest) == stored, "\(n) bytes, pieces below \(maxPiece)")
                #expect(digest == rf_xxh64_digest(&other), "\(n) bytes: the two paths differ")
            }
        }
    }

    @Test func emptyBlocksOfEveryTypeDecodeToNothing() {
        // Empty raw, compressed and RLE blocks (libzstd's frame decoder passes over a size-0 block of any type),
        // then a raw block holding one line (fuzz regression empty-compressed-block).
        let header: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00]
        let line = Array("a line\n".utf8)
        let last = line.count << 3 | 1
        let frame =
            header + [0x00, 0x00, 0x00] + [0x04, 0x00, 0x00] + [0x02, 0x00, 0x00, 0x41]
            + [UInt8(truncatingIfNeeded: last), UInt8(truncatingIfNeeded: last >> 8), 0] + line
        #expect(blockTypes(frame) == [0, 2, 1, 0])
        let fast = read(frame, small, inPlace: true)
        #expect(fast.framesInPlace == 1)
        #expect(fast.outcome.error == nil)
        #expect(fast.outcome.lines.map(\.text) == ["a line"])
        expectEqual(fast.outcome, read(frame, small, inPlace: false).outcome, "empty blocks")
    }

    @Test func libzstdRejectsAnEmptyCompressedBlockOnlyInOnePass() {
        // Two frames with a declared size of 0 and a checksum; the second's only block is a compressed block of size
        // 0. Streamed, libzstd decodes such a frame in one pass (its size is declared and it lies whole in the input)
        // and calls the block corrupt; the in-place path passes over it unless told to reject it
        // (fuzz regression empty-block-one-pass).
        let empty: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x00]
        let checksum: [UInt8] = [0x99, 0xE9, 0xD8, 0x51]
        let input = empty + [0x01, 0x00, 0x00] + checksum + empty + [0x05, 0x00, 0x00] + checksum
        #expect(read(input, small, inPlace: true).outcome.error == nil)
        let slow = read(input, small, inPlace: false).outcome
        #expect(slow.error?.hasPrefix("input 't.zst' is not a valid zstd stream (") == true)
        let strict = read(input, small, inPlace: true, strictEmpty: true)
        #expect(strict.framesInPlace == 2)
        expectSameVerdict(strict.outcome, slow, "empty compressed block, rejected")
    }

    @Test func libzstdRejectsAnRLEBlockOfAnEmptyWindowOnlyInPieces() {
        // A frame with a declared size of 0 (so a window of 0 bytes) and a checksum, whose blocks are 18 empty raw
        // blocks (so that the RLE block lies past the 18 bytes read to choose the path), an RLE block of size 0 and
        // an empty raw block. Fed in pieces, libzstd must hold the RLE block's byte in an input buffer of the
        // window's size and calls the frame corrupt; fed whole, it decodes it to nothing, as the in-place path does
        // however it arrives (fuzz regression rle-block-of-an-empty-window-in-pieces).
        let header: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x00]
        let emptyRaw: [UInt8] = [0x00, 0x00, 0x00]
        let rle: [UInt8] = [0x02, 0x00, 0x00, 0x00]
        let lastEmptyRaw: [UInt8] = [0x01, 0x00, 0x00]
        let checksum: [UInt8] = [0x99, 0xE9, 0xD8, 0x51]
        let input = header + Array([[UInt8]](repeating: emptyRaw, count: 18).joined()) + rle + lastEmptyRaw + checksum
        let whole = read(input, small, inPlace: false).outcome
        #expect(whole.error == nil)
        for chunk in [1, 2, 5, 41] {
            #expect(read(input, small, inPlace: false, chunk: chunk).outcome.error?.contains("corrupt") == true)
            let fast = read(input, small, inPlace: true, chunk: chunk)
            #expect(fast.framesInPlace == 1)
            expectEqual(fast.outcome, whole, "chunk \(chunk)")
        }
    }

    @Test func blocksLargerThanTheFrameAllowsAreCorrupt() {
        // A 1 KB window allows blocks of at most 1 KB; these hold 2 KB, raw or RLE, and decode to valid lines.
        let line = [UInt8](repeating: 0x61, count: 2047) + [0x0A]
        let header: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00]
        let size = 2048 << 3
        let raw = header + [UInt8(truncatingIfNeeded: size | 1), UInt8(truncatingIfNeeded: size >> 8), 0] + line
        let rle = header + [UInt8(truncatingIfNeeded: size | 3), UInt8(truncatingIfNeeded: size >> 8), 0, 0x61]
        #expect(frameWindow(raw) == 1024)
        for frame in [raw, rle] {
            let fast = read(frame, small, inPlace: true)
            #expect(fast.framesInPlace == 1)
            #expect(fast.outcome.error?.hasPrefix("input 't.zst' is not a valid zstd stream (") == true)
            expectSameVerdict(fast.outcome, read(frame, small, inPlace: false).outcome, "block of 2 KB")
        }
        // The same blocks at 1 KB are fine.
        let ok = 1024 << 3
        let fine =
            header + [UInt8(truncatingIfNeeded: ok | 1), UInt8(truncatingIfNeeded: ok >> 8), 0]
            + [UInt8](repeating: 0x62, count: 1023) + [0x0A]
        let fast = read(fine, small, inPlace: true)
        #expect(fast.outcome.error == nil && fast.framesInPlace == 1 && fast.outcome.lines.count == 1)
    }

}
