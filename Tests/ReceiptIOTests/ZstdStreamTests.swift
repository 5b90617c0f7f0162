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

private func outcome(_ r: ReadResult) -> Outcome {
    Outcome(
        lines: r.records.map { Line(line: $0.line, text: $0.text, tooLarge: $0.tooLarge) }, blankLines: r.blankLines,
        inputBytes: r.inputBytes)
}

/// Reads `compressed` through a `ZstdByteSource` and a `RecordReader`, the source delivering `chunk` bytes a read.
private func read(
    _ compressed: [UInt8], _ options: ReaderOptions, order: BatchOrder = .same, chunk: Int = 1 << 20
) -> Outcome {
    do {
        let zstd = try ZstdByteSource(MemoryByteSource(compressed, chunk: chunk), name: "t.zst")
        return outcome(try readAll(RecordReader(source: zstd, name: "t.zst", options: options), options, order: order))
    } catch let e as InputError {
        return Outcome(error: e.message)
    } catch {
        return Outcome(error: "unexpected \(error)")
    }
}

/// The records of the uncompressed text, read by the reader from memory (no zstd at all).
private func plain(_ text: [UInt8], _ options: ReaderOptions) throws -> Outcome {
    var want = outcome(try readAll(RecordReader(source: MemoryByteSource(text), name: "t", options: options), options))
    want.inputBytes = 0
    return want
}

/// Checks that reading `compressed` (the compression of `text`) gives exactly the plain text's records.
private func expectSame(
    _ text: [UInt8], _ compressed: [UInt8], _ options: ReaderOptions, order: BatchOrder, chunk: Int = 1 << 20,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let got = read(compressed, options, order: order, chunk: chunk)
    #expect(got.error == nil, sourceLocation: sourceLocation)
    var want = try plain(text, options)
    want.inputBytes = compressed.count
    expectEqual(got, want, "zstd vs the text", sourceLocation: sourceLocation)
}

/// Batches of 1 MB.
private let small = ReaderOptions(maxRecordSize: 64 << 10, batchBytes: 1 << 20)

private let orders: [BatchOrder] = [
    .same, .lifo(held: 1), .lifo(held: 3), .fifo(held: 1), .fifo(held: 3), .shuffled(held: 4, seed: 7),
]

private let corruptPrefix = "input 't.zst' is not a valid zstd stream ("
private let truncatedMessage = "input 't.zst' ends in the middle of a zstd frame; the file is truncated"

/// zstd input through `ZstdByteSource` (libzstd's streaming decoder) and the `RecordReader`: every kind of frame
/// stream gives the records of its decompressed text, and every damaged one fails with a message that says how.
@Suite struct ZstdStreamTests {
    /// A frame with a 256 MB window (`zstd --long=28`) is valid but beyond what the reader keeps: it is refused with
    /// a message that says so, not one that suggests a truncated file.
    @Test func aWindowBeyond128MBIsRefusedAsSuch() throws {
        let text = repetitiveLines(bytes: 200_000, stretch: 50_000, lengths: 10...200, seed: 7)
        let compressed = encodeFrame(text, FrameSpec(windowLog: 28, knownSize: false))
        let message = try #require(read(compressed, ReaderOptions()).error)
        #expect(message.contains("window larger than 128 MB"), "\(message)")
        #expect(!message.contains("complete"), "\(message)")
    }

    @Test(arguments: orders)
    func backReferencesAcrossBatchesSurviveAnyReturnOrder(order: BatchOrder) throws {
        // 512 KB window, text that repeats 400 KB stretches: matches reach across the reader's batches.
        let text = repetitiveLines(bytes: 3 << 20, stretch: 400 << 10, lengths: 20...3000, seed: 11)
        try expectSame(text, encodeFrame(text, FrameSpec(windowLog: 19)), small, order: order)
    }

    @Test(arguments: [BatchOrder.same, .lifo(held: 1), .fifo(held: 5)])
    func defaultOptionsWithTheDefaultWindowOfLevel3(order: BatchOrder) throws {
        // What receiptflow meets in practice: 4 MB batches, a 2 MB window (zstd -3 on a large input).
        let text = repetitiveLines(bytes: 9 << 20, stretch: 1_900 << 10, lengths: 200...9000, seed: 4)
        try expectSame(text, encodeFrame(text, FrameSpec(knownSize: false)), ReaderOptions(), order: order)
    }

    /// Concatenated frames with and without checksums, with and without a declared size, of several levels and
    /// windows, empty ones, and skippable frames between them, cut anywhere in a line.
    @Test(arguments: [BatchOrder.same, .lifo(held: 2), .fifo(held: 2), .shuffled(held: 3, seed: 2)])
    func framesOfEveryKindInOneStream(order: BatchOrder) throws {
        let text = repetitiveLines(bytes: 6 << 20, stretch: 300 << 10, lengths: 1...5000, seed: 5)
        let specs = [
            FrameSpec(windowLog: 19),
            FrameSpec(windowLog: 18, checksum: true),
            FrameSpec(windowLog: 19, knownSize: false),
            FrameSpec(windowLog: 22, knownSize: false),
            FrameSpec(checksum: true, knownSize: false, long: true),
            FrameSpec(level: 1),
            FrameSpec(level: 12, windowLog: 20, checksum: true, knownSize: false),
        ]
        let skippable: [[UInt8]] = [[], Array("skip me".utf8), [UInt8](repeating: 0x0A, count: 300 << 10)]
        var rng = SplitMix(seed: 9)
        var compressed: [UInt8] = []
        var start = 0
        var k = 0
        var skipped = 0
        while start < text.count {
            let size = k % 9 == 4 ? 0 : min(Int(rng.next() % (900 << 10)), text.count - start)
            compressed += encodeFrame(Array(text[start..<(start + size)]), specs[k % specs.count])
            if k % 3 == 1 {
                compressed += skippableFrame(skippable[k % skippable.count], variant: UInt8(k))
                skipped += 1
            }
            start += size
            k += 1
        }
        #expect(k >= 10 && skipped >= 3)
        try expectSame(text, compressed, small, order: order, chunk: 40_001)
    }

    @Test func aSourceThatDeliversAFewBytesAtATime() throws {
        let text = repetitiveLines(bytes: 1 << 20, stretch: 100 << 10, lengths: 1...400, seed: 8)
        let compressed =
            encodeFrame(Array(text[..<300_000]), FrameSpec(windowLog: 18, checksum: true))
            + skippableFrame(Array("x".utf8)) + encodeFrame(Array(text[300_000...]), FrameSpec(windowLog: 19))
        try expectSame(text, compressed, small, order: .lifo(held: 1), chunk: 3)
    }

    @Test(arguments: [BatchOrder.same, .lifo(held: 1), .fifo(held: 3)])
    func tinyLinesForceLargeCarries(order: BatchOrder) throws {
        // 300 records per batch of a few bytes each: most of what a batch read is carried to the next.
        let options = ReaderOptions(maxRecordSize: 64 << 10, batchBytes: 1 << 20, maxRecordsPerBatch: 300)
        let a = repetitiveLines(bytes: 1 << 20, stretch: 100 << 10, lengths: 1...12, seed: 3)
        let b = repetitiveLines(bytes: 1 << 20, stretch: 200 << 10, lengths: 0...6, seed: 13)
        let compressed =
            encodeFrame(a, FrameSpec(windowLog: 18)) + encodeFrame(b, FrameSpec(windowLog: 19, knownSize: false))
        try expectSame(a + b, compressed, options, order: order)
    }

    @Test(arguments: [BatchOrder.same, .lifo(held: 2)])
    func recordsLongerThanABlockAndLinesOverTheLimit(order: BatchOrder) throws {
        // Records up to 256 KB; longer lines are skipped, some longer than a whole batch.
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

    @Test func truncatedStreamsFailAsSuch() throws {
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
            let got = read(input, small, order: .lifo(held: 1))
            if edges.contains(cut) {
                // A cut between frames is a complete stream: the first frame's lines.
                var want = try plain(Array(text[..<700_000]), small)
                want.inputBytes = cut
                expectEqual(got, want, "cut at \(cut)")
            } else {
                #expect(got.error == truncatedMessage, "cut at \(cut): \(got.error ?? "no error")")
            }
        }
    }

    @Test func corruptStreamsFailClearly() throws {
        let text = repetitiveLines(bytes: 1_200_000, stretch: 150 << 10, lengths: 10...3000, seed: 14)
        let checked = encodeFrame(Array(text[..<500_000]), FrameSpec(windowLog: 18, checksum: true))
        let whole = checked + encodeFrame(Array(text[500_000...]), FrameSpec(windowLog: 19))
        var rng = SplitMix(seed: 15)
        var failed = 0
        for k in 0..<120 {
            // Even rounds: the checksummed frame alone, where any change after its header must be caught.
            var input = k % 2 == 0 ? checked : whole
            // Mostly one changed byte; now and then a run of garbage.
            let at = Int(rng.next() % UInt64(input.count))
            let count = k % 10 == 1 ? min(64, input.count - at) : 1
            for i in at..<(at + count) { input[i] ^= UInt8(truncatingIfNeeded: 1 + rng.next() % 255) }
            let got = read(input, small, order: .lifo(held: 1))
            if let e = got.error {
                failed += 1
                #expect(e.hasPrefix("input 't.zst' "), "corrupt at \(at): \(e)")
            }
            if k % 2 == 0 && at >= 20 { #expect(got.error != nil, "corrupt at \(at) accepted") }
        }
        #expect(failed >= 60)
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
        let corrupt = corruptPrefix + "Data corruption detected); check that the file is complete"
        // Whole, and arriving a few bytes per read (a pipe): libzstd then decodes it block by block and checks no
        // declared size itself, so ZstdByteSource checks it.
        for chunk in [1, 3, 7, 1 << 20] {
            #expect(read(short, small, chunk: chunk).error == corrupt, "chunk \(chunk)")
        }
        // Holds 12 bytes but declares 5 (the one-byte content size of a single-segment frame follows its descriptor).
        var long = encodeFrame(Array("hello world\n".utf8))
        #expect(long[4] & 0xE0 == 0x20 && long[5] == 12)
        long[5] = 5
        for chunk in [1, 5, 1 << 20] {
            #expect(read(long, small, chunk: chunk).error?.hasPrefix(corruptPrefix) == true, "chunk \(chunk)")
        }
    }

    @Test func aWrongChecksumFailsAndSaysSo() throws {
        let text = repetitiveLines(bytes: 700_000, stretch: 100 << 10, lengths: 10...900, seed: 33)
        let frame = encodeFrame(text, FrameSpec(windowLog: 18, checksum: true))
        try expectSame(text, frame, small, order: .same)
        for k in 1...4 {
            for bit: UInt8 in [0x01, 0x80] {
                var bad = frame
                bad[bad.count - k] ^= bit
                for chunk in [1 << 20, 1000] {
                    let error = read(bad, small, chunk: chunk).error
                    #expect(
                        error?.hasPrefix("input 't.zst' fails its zstd content checksum") == true,
                        "byte -\(k), chunk \(chunk): \(error ?? "accepted")")
                }
            }
        }
    }

    @Test func emptyBlocksOfEveryTypeDecodeToNothing() {
        // Empty raw, compressed and RLE blocks, then a raw block holding one line (fuzz regression
        // empty-compressed-block): libzstd's streaming decoder passes over the empty ones.
        let header: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00]
        let line = Array("a line\n".utf8)
        let last = line.count << 3 | 1
        let frame =
            header + [0x00, 0x00, 0x00] + [0x04, 0x00, 0x00] + [0x02, 0x00, 0x00, 0x41]
            + [UInt8(truncatingIfNeeded: last), UInt8(truncatingIfNeeded: last >> 8), 0] + line
        let got = read(frame, small)
        #expect(got.error == nil)
        #expect(got.lines.map(\.text) == ["a line"])
    }

    @Test func blocksLargerThanTheFrameAllowsAreCorrupt() {
        // A 1 KB window allows blocks of at most 1 KB; these hold 2 KB, raw or RLE, and decode to valid lines.
        let line = [UInt8](repeating: 0x61, count: 2047) + [0x0A]
        let header: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00]
        let size = 2048 << 3
        let raw = header + [UInt8(truncatingIfNeeded: size | 1), UInt8(truncatingIfNeeded: size >> 8), 0] + line
        let rle = header + [UInt8(truncatingIfNeeded: size | 3), UInt8(truncatingIfNeeded: size >> 8), 0, 0x61]
        for frame in [raw, rle] {
            #expect(read(frame, small).error?.hasPrefix(corruptPrefix) == true)
        }
        // The same blocks at 1 KB are fine.
        let ok = 1024 << 3
        let fine =
            header + [UInt8(truncatingIfNeeded: ok | 1), UInt8(truncatingIfNeeded: ok >> 8), 0]
            + [UInt8](repeating: 0x62, count: 1023) + [0x0A]
        let got = read(fine, small)
        #expect(got.error == nil && got.lines.count == 1)
    }

    /// The committed fuzz corpus and crash regressions of the zstd target (Fuzz/corpus/zstd, Fuzz/regressions/zstd),
    /// with the target's options, arrival (the last byte picks whole reads or a few bytes a read) and verdict: the
    /// reader's records are the lines of what the source decodes, or both fail.
    @Test func fuzzCorpusAndRegressionsReadAsTheirDecodedLines() throws {
        let options = ReaderOptions(maxRecordSize: 4096, batchBytes: 256 << 10, maxRecordsPerBatch: 64)
        var files = 0
        var readable = 0
        for kind in ["corpus", "regressions"] {
            let dir = Fixtures.packageRoot.appendingPathComponent("Fuzz/\(kind)/zstd")
            for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
            where !name.hasPrefix(".") {
                let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
                let last = bytes.last ?? 0
                let chunk = last & 1 == 1 ? 1 + Int(last >> 1) : 1 << 20
                let got = read(bytes, options, order: .lifo(held: 1), chunk: chunk)
                let decoded = decodeAll(bytes, chunk: chunk)
                switch decoded {
                case .failure(let e):
                    #expect(got.error != nil, "\(name): the reader accepts what the source rejects (\(e.message))")
                case .success(let text):
                    var want = try plain(text, options)
                    want.inputBytes = bytes.count
                    expectEqual(got, want, name)
                    readable += 1
                }
                files += 1
            }
        }
        #expect(files >= 10)
        #expect(readable >= 5)
    }
}

/// Every byte `compressed` decompresses to through `ZstdByteSource`, read in 64 KB pieces from a source that delivers
/// `chunk` bytes a read; the error when it fails.
func decodeAll(_ compressed: [UInt8], chunk: Int) -> Result<[UInt8], InputError> {
    do throws(InputError) {
        let source = try ZstdByteSource(MemoryByteSource(compressed, chunk: chunk), name: "t.zst")
        var all: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try source.read(into: buffer)
            if n == 0 { return .success(all) }
            all += buffer[..<n]
        }
    } catch {
        return .failure(error)
    }
}
