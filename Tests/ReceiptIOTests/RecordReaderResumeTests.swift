import ReceiptIO
import Testing

/// One batch as a resumed run sees it: its records, blank lines, format and where it ends.
private struct BatchView {
    var records: [(line: Int, text: String, tooLarge: Bool)]
    var blankLines: Int
    var endLine: Int
    var format: RecordFormat
}

private func batches(_ text: [UInt8], _ options: ReaderOptions, chunk: Int, skip: Int = 0) throws -> [BatchView] {
    let reader = RecordReader(source: MemoryByteSource(text, chunk: chunk), name: "m", options: options)
    reader.skipThroughLine = skip
    let batch = RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch)
    var out: [BatchView] = []
    while try reader.fill(batch) {
        precondition(out.count < 100_000, "reader does not terminate")
        let records = batch.records.indices.map { i in
            (
                batch.records[i].line, batch.withRecord(i) { String(decoding: $0, as: UTF8.self) },
                batch.records[i].tooLarge
            )
        }
        out.append(
            BatchView(records: records, blankLines: batch.blankLines, endLine: batch.endLine, format: batch.format))
    }
    return out
}

/// Lines of every kind the reader distinguishes: records, blank lines (some longer than the size limit), CRLF, and
/// lines over the size limit (some blanks first).
private func mixedText(seed: UInt64, lines: Int, ndjson: Bool) -> [UInt8] {
    var state = seed
    func next() -> UInt64 {
        // xorshift64*: a fixed, dependency-free sequence for reproducible inputs.
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
    var text: [UInt8] = []
    for k in 0..<lines {
        switch next() % 10 {
        case 0: text += Array("   ".utf8)
        case 1: text += []
        case 2: text += Array(repeating: UInt8(ascii: "z"), count: 40 + Int(next() % 30))  // over the limit
        case 3: text += Array(repeating: UInt8(ascii: " "), count: 40 + Int(next() % 60))  // blank, over the limit
        case 4: text += Array(repeating: UInt8(ascii: "\t"), count: 40 + Int(next() % 60)) + [UInt8(ascii: "q")]
        default:
            let body = String(repeating: "ab", count: 1 + Int(next() % 8))
            // The first record decides the format: a base64-looking first line makes the source base64.
            text += Array((ndjson ? "{\"r\":\"\(body)\",\"k\":\(k)}" : "\(body)\(k)").utf8)
        }
        if next() % 4 == 0 { text.append(0x0D) }
        if k < lines - 1 || next() % 2 == 0 { text.append(0x0A) }
    }
    return text
}

@Suite struct RecordReaderResumeTests {
    @Test(arguments: [(1 as UInt64, true), (2, false), (3, true), (4, false)])
    func resumingAfterAnyBatchEndYieldsExactlyTheRemainingRecordsAndBlankLines(seed: UInt64, ndjson: Bool) throws {
        let text = mixedText(seed: seed, lines: 300, ndjson: ndjson)
        let options = ReaderOptions(maxRecordSize: 36, batchBytes: 96, maxRecordsPerBatch: 5)
        let clean = try batches(text, options, chunk: 7)
        #expect(clean.count > 20)
        let format = clean.first { !$0.records.isEmpty }!.format
        for (b, cut) in clean.enumerated() {
            // What the clean run produced after batch b...
            let rest = clean[(b + 1)...]
            let wantRecords = rest.flatMap(\.records)
            let wantBlank = rest.reduce(0) { $0 + $1.blankLines }
            // ...is exactly what a reader skipping through batch b's end produces, whatever its chunking.
            let resumed = try batches(text, options, chunk: 11, skip: cut.endLine)
            let got = resumed.flatMap(\.records)
            #expect(got.count == wantRecords.count, "after batch \(b) (line \(cut.endLine))")
            for (g, w) in zip(got, wantRecords) {
                #expect(g.line == w.line && g.text == w.text && g.tooLarge == w.tooLarge, "line \(w.line)")
            }
            #expect(resumed.reduce(0) { $0 + $1.blankLines } == wantBlank, "after batch \(b)")
            #expect(resumed.allSatisfy { $0.records.isEmpty || $0.format == format })
        }
    }

    @Test func endLineNeverDecreasesAndCoversEveryRecordOfItsBatch() throws {
        let text = mixedText(seed: 9, lines: 200, ndjson: true)
        let options = ReaderOptions(maxRecordSize: 36, batchBytes: 96, maxRecordsPerBatch: 4)
        var previous = 0
        var lastRecordLine = 0
        for b in try batches(text, options, chunk: 5) {
            #expect(b.endLine >= previous)
            for r in b.records {
                #expect(r.line > previous && r.line <= b.endLine)
                lastRecordLine = r.line
            }
            previous = b.endLine
        }
        #expect(lastRecordLine > 150)
        #expect(previous >= lastRecordLine)
    }

    @Test func aLineBeingSkippedAsTooLargeEndsItsBatchOnItsOwnNumber() throws {
        // Batch capacity 42 (2 × 20 + 2): the 60-byte line is cut off unfinished, and its record fills the batch
        // (2 records at most), so the batch ends while the rest of the line is still to be skipped.
        let text = Array(("short\n" + String(repeating: "x", count: 60) + "\nafter\n").utf8)
        let options = ReaderOptions(maxRecordSize: 20, batchBytes: 16, maxRecordsPerBatch: 2)
        let clean = try batches(text, options, chunk: 64)
        let tooLarge = try #require(clean.firstIndex { $0.records.contains { $0.tooLarge } })
        #expect(clean[tooLarge].endLine == 2)
        let resumed = try batches(text, options, chunk: 3, skip: 2).flatMap(\.records)
        #expect(resumed.map(\.text) == ["after"])
        #expect(resumed.map(\.line) == [3])
    }
}
