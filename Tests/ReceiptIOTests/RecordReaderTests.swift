import ReceiptIO
import ReceiptSynth
import Testing

/// A reference line splitter written independently of the reader: what every record should be.
private func expectedRecords(_ text: [UInt8], maxRecordSize: Int) -> (records: [(Int, String, Bool)], blanks: Int) {
    var lines = text.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
    if text.last == 0x0A { lines.removeLast() }
    var out: [(Int, String, Bool)] = []
    var blanks = 0
    for (k, var l) in lines.enumerated() {
        if l.last == 0x0D { l.removeLast() }
        // A blank line is blank whatever its length; only a line with something else in it can be too large.
        if l.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
            blanks += 1
        } else if l.count > maxRecordSize {
            out.append((k + 1, "", true))
        } else {
            out.append((k + 1, String(decoding: l, as: UTF8.self), false))
        }
    }
    return (out, blanks)
}

private func check(_ text: [UInt8], chunk: Int, options: ReaderOptions) throws {
    let reader = RecordReader(source: MemoryByteSource(text, chunk: chunk), name: "mem", options: options)
    let got = try readAll(reader, options)
    let want = expectedRecords(text, maxRecordSize: options.maxRecordSize)
    #expect(got.blankLines == want.blanks)
    #expect(got.inputBytes == text.count)
    #expect(got.records.count == want.records.count)
    for (g, w) in zip(got.records, want.records) {
        #expect(g.line == w.0 && g.text == w.1 && g.tooLarge == w.2, "line \(w.0)")
    }
}

@Suite struct RecordReaderTests {
    @Test func cutsLinesWithLineNumbersAcrossCRLFBlankLinesAndAMissingFinalNewline() throws {
        let text = "AAAA\r\n\n  \r\nBBBB\nCCCC"
        let options = ReaderOptions(maxRecordSize: 64, batchBytes: 1024)
        let got = try readAll(RecordReader(source: MemoryByteSource(text), name: "m", options: options), options)
        #expect(got.records.map(\.line) == [1, 4, 5])
        #expect(got.records.map(\.text) == ["AAAA", "BBBB", "CCCC"])
        #expect(got.blankLines == 2)
    }

    @Test func producesNothingForAnEmptyInput() throws {
        let options = ReaderOptions()
        let got = try readAll(RecordReader(source: MemoryByteSource(""), name: "m", options: options), options)
        #expect(got.records.isEmpty && got.blankLines == 0)
    }

    @Test func carriesARecordThatStraddlesTheBatchEndIntoTheNextBatch() throws {
        // Capacity 42: the third line cannot fit in the first batch.
        let text = "0123456789abcdef\n0123456789ABCDEF\nxyzxyzxyzxyzxyzxyz\nend\n"
        let options = ReaderOptions(maxRecordSize: 20, batchBytes: 16)
        #expect(options.batchCapacity == 42)
        let got = try readAll(
            RecordReader(source: MemoryByteSource(text, chunk: 5), name: "m", options: options), options)
        #expect(got.records.map(\.text) == ["0123456789abcdef", "0123456789ABCDEF", "xyzxyzxyzxyzxyzxyz", "end"])
        #expect(got.batches >= 2)
    }

    @Test func endsABatchAtTheFirstWholeLineReachingTheTargetThoughTheBufferIsLarger() throws {
        // Capacity 2 x 100 + 2 = 202, target 20: ten-byte lines make batches of two lines (20 bytes), not of
        // eighteen (the capacity), and a line crossing the target stays whole.
        let lines = (0..<9).map { String(format: "line%05d", $0) }
        let text = lines.joined(separator: "\n") + "\n"
        let options = ReaderOptions(maxRecordSize: 100, batchBytes: 20)
        #expect(options.batchCapacity == 202)
        let reader = RecordReader(source: MemoryByteSource(text, chunk: 7), name: "m", options: options)
        let batch = RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch)
        var sizes: [Int] = []
        var texts: [String] = []
        while try reader.fill(batch) {
            sizes.append(batch.records.count)
            for i in batch.records.indices { texts.append(batch.withRecord(i) { String(decoding: $0, as: UTF8.self) }) }
        }
        #expect(texts == lines)
        #expect(sizes == [2, 2, 2, 2, 1])
    }

    @Test func turnsAnOversizedLineIntoOneTooLargeRecordAndKeepsGoing() throws {
        let long = String(repeating: "Q", count: 1000)
        let text = "ok1\n\(long)\nok2\n\(long)"
        let options = ReaderOptions(maxRecordSize: 20, batchBytes: 16)
        let got = try readAll(
            RecordReader(source: MemoryByteSource(text, chunk: 7), name: "m", options: options), options)
        #expect(got.records.map(\.line) == [1, 2, 3, 4])
        #expect(got.records.map(\.tooLarge) == [false, true, false, true])
        #expect(got.records.map(\.text) == ["ok1", "", "ok2", ""])
    }

    @Test(arguments: [1, 7, 1000])
    func aLineOfOnlyBlanksLongerThanTheLimitIsABlankLineNotARecord(chunk: Int) throws {
        let blanks = String(repeating: " \t", count: 500)
        // Line 4 is blanks and then a letter: too large. Line 6 is blanks without a final newline.
        let text = "ok1\n\(blanks)\nok2\n\(blanks)x\nok3\n\(String(repeating: "\r \t", count: 400))"
        for maxRecords in [1, 2, 100] {
            let options = ReaderOptions(maxRecordSize: 20, batchBytes: 16, maxRecordsPerBatch: maxRecords)
            let got = try readAll(
                RecordReader(source: MemoryByteSource(text, chunk: chunk), name: "m", options: options), options)
            #expect(got.records.map(\.line) == [1, 3, 4, 5], "max \(maxRecords)")
            #expect(got.records.map(\.tooLarge) == [false, false, true, false], "max \(maxRecords)")
            #expect(got.records.map(\.text) == ["ok1", "ok2", "", "ok3"], "max \(maxRecords)")
            #expect(got.blankLines == 2, "max \(maxRecords)")
            #expect(got.inputBytes == text.utf8.count)
        }
        // A blank line under the limit was blank before too; one over it is now the same.
        let options = ReaderOptions(maxRecordSize: 20, batchBytes: 16)
        let short = try readAll(
            RecordReader(source: MemoryByteSource("   \nok\n", chunk: chunk), name: "m", options: options), options)
        #expect(short.blankLines == 1 && short.records.map(\.text) == ["ok"])
    }

    @Test func acceptsALineOfExactlyTheMaximumSizeEvenWithCRLF() throws {
        let exact = String(repeating: "Z", count: 20)
        let text = "\(exact)\r\n\(exact)Z\r\n"
        let options = ReaderOptions(maxRecordSize: 20, batchBytes: 16)
        let got = try readAll(
            RecordReader(source: MemoryByteSource(text, chunk: 3), name: "m", options: options), options)
        #expect(got.records.map(\.tooLarge) == [false, true])
        #expect(got.records.first?.text == exact)
    }

    @Test func splitsBatchesAtTheRecordCountLimitWithoutLosingLines() throws {
        let text = (1...25).map { "line\($0)" }.joined(separator: "\n")
        let options = ReaderOptions(maxRecordSize: 64, batchBytes: 4096, maxRecordsPerBatch: 4)
        let got = try readAll(RecordReader(source: MemoryByteSource(text), name: "m", options: options), options)
        #expect(got.records.map(\.text) == (1...25).map { "line\($0)" })
        #expect(got.batches == 7)
    }

    @Test func detectsNDJSONFromTheFirstNonBlankByteAndBase64Otherwise() throws {
        let options = ReaderOptions()
        let json = try readAll(
            RecordReader(source: MemoryByteSource("\n  {\"a\":1}\n"), name: "m", options: options), options)
        #expect(json.formats == [.ndjson])
        let b64 = try readAll(RecordReader(source: MemoryByteSource("\nMIAG\n"), name: "m", options: options), options)
        #expect(b64.formats == [.base64])
    }

    @Test(arguments: [1, 3, 17, 64, 1000])
    func matchesAReferenceSplitterOnRandomInput(chunk: Int) throws {
        var rng = SplitMix(seed: UInt64(chunk))
        let alphabet = Array("ab{}\" \r\n\n\n\t".utf8)
        for _ in 0..<20 {
            let length = Int(rng.next() % 3000)
            var text = (0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            // Sprinkle some long runs without newlines to exercise oversized lines, and long blank runs: a blank
            // line of any length, or blanks followed by something else (a line too large).
            if rng.next() % 2 == 0 { text.insert(contentsOf: [UInt8](repeating: 0x61, count: 90), at: length / 2) }
            if rng.next() % 2 == 0 {
                let blanks: [UInt8] = [0x20, 0x09, 0x0D]
                let run = (0..<(60 + Int(rng.next() % 120))).map { _ in blanks[Int(rng.next() % 3)] }
                text.insert(contentsOf: [0x0A] + run, at: Int(rng.next() % UInt64(text.count + 1)))
            }
            let options = ReaderOptions(
                maxRecordSize: 5 + Int(rng.next() % 40), batchBytes: 8 + Int(rng.next() % 100),
                maxRecordsPerBatch: 1 + Int(rng.next() % 9))
            try check(text, chunk: chunk, options: options)
        }
    }
}
