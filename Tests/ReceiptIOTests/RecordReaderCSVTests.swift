import Foundation
import ReceiptIO
import ReceiptTestSupport
import Testing

/// One read of a whole input: the records as (line, text, tooLarge), blank lines, and each batch's end line with
/// the number of records up to it.
private struct CSVRead {
    var records: [(line: Int, text: String, tooLarge: Bool)] = []
    var blankLines = 0
    var ends: [(endLine: Int, recordsBefore: Int)] = []
    var formats: [RecordFormat] = []
}

private func read(_ text: [UInt8], _ options: ReaderOptions, chunk: Int = 1 << 20, skip: Int = 0) throws -> CSVRead {
    let reader = RecordReader(source: MemoryByteSource(text, chunk: chunk), name: "m.csv", options: options)
    reader.skipThroughLine = skip
    let batch = RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch)
    var out = CSVRead()
    while try reader.fill(batch) {
        precondition(out.ends.count < 1_000_000, "reader does not terminate")
        for i in batch.records.indices {
            let r = batch.records[i]
            out.records.append((r.line, batch.withRecord(i) { String(decoding: $0, as: UTF8.self) }, r.tooLarge))
        }
        if !batch.records.isEmpty { out.formats.append(batch.format) }
        out.blankLines += batch.blankLines
        out.ends.append((batch.endLine, out.records.count))
    }
    return out
}

/// The rows of `body` (what follows a header line) by RFC 4180 alone, written independently of the reader: a
/// quote opens a quoted field only at a field's start, rows end at a line feed outside quotes, a `\r` before it is
/// dropped, a row longer than `maxSize` is too large, a row of only blanks on one line is a blank line.
private func referenceRows(_ body: [UInt8], firstLine: Int, maxSize: Int) -> CSVRead {
    var out = CSVRead()
    var line = firstLine
    var i = 0
    while i < body.count {
        var j = i
        var fieldStart = true
        var quoted = false
        var inner = 0
        while j < body.count {
            let b = body[j]
            if quoted {
                if b == 0x22 {
                    if j + 1 < body.count && body[j + 1] == 0x22 {
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
        let row = Array(body[i..<e])
        if row.count > maxSize {
            out.records.append((line, "", true))
        } else if inner == 0 && row.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
            out.blankLines += 1
        } else {
            out.records.append((line, String(decoding: row, as: UTF8.self), false))
        }
        line += inner + 1
        i = j + 1
    }
    return out
}

/// A CSV-like body of random rows: plain and quoted fields, doubled quotes, quoted line breaks, CRLF, blank
/// lines, stray quotes, an unterminated quote now and then, and rows longer than the size limit.
private func randomBody(seed: UInt64, rows: Int) -> [UInt8] {
    var state = seed | 1
    func next() -> UInt64 {
        // xorshift64*: reproducible without dependencies.
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
    let alphabet: [UInt8] = Array("ab,\"\n\r =".utf8)
    var text: [UInt8] = []
    for _ in 0..<rows {
        switch next() % 8 {
        case 0:
            // Raw bytes of the CSV alphabet: any mix of quotes and breaks.
            for _ in 0..<(next() % 40) { text.append(alphabet[Int(next() % UInt64(alphabet.count))]) }
        case 1:
            text += Array("   ".utf8)
        case 2:
            text += Array("u\(next() % 100),\"line one\nline \"\"two\"\"\",x".utf8)
        case 3:
            text += Array("long,".utf8) + Array(repeating: UInt8(ascii: "Q"), count: 50 + Int(next() % 40))
        case 4:
            text +=
                Array("q,\"".utf8) + Array(repeating: UInt8(ascii: "\n"), count: Int(next() % 4))
                + Array(repeating: UInt8(ascii: "w"), count: Int(next() % 70)) + [0x22]
        default:
            text += Array("id\(next() % 1000),cmVjZWlwdA==".utf8)
        }
        if next() % 3 == 0 { text.append(0x0D) }
        text.append(0x0A)
    }
    return text
}

private let header = Array("id,receipt_data\n".utf8)

@Suite struct RecordReaderCSVTests {
    @Test func aHeaderNamingTheReceiptFieldMakesTheInputCSVAndIsNoRecord() throws {
        let text = "user_id,receipt_data,created_at\nu1,QUJD,2024-01-01\nu2,\"REVG\",2024-01-02\n"
        let got = try read(Array(text.utf8), ReaderOptions())
        #expect(got.records.map(\.line) == [2, 3])
        #expect(got.records.map(\.text) == ["u1,QUJD,2024-01-01", "u2,\"REVG\",2024-01-02"])
        let expected = try #require(
            CSVHeader(
                columns: ["user_id", "receipt_data", "created_at"], receiptFields: CSVHeader.defaultReceiptFields))
        #expect(got.formats == [.csv(expected)])
        #expect(expected.receiptColumn == 1)
    }

    @Test func quotedLineBreaksStayInTheirRowWhichIsNumberedByItsFirstLine() throws {
        let text = "id,receipt\r\n\"a\r\nb\",\"x\"\"y\nz\"\r\nc,QUJD\r\n\r\n\"d\",\"\"\r\n"
        let got = try read(Array(text.utf8), ReaderOptions())
        #expect(got.records.map(\.line) == [2, 5, 7])
        #expect(got.records.map(\.text) == ["\"a\r\nb\",\"x\"\"y\nz\"", "c,QUJD", "\"d\",\"\""])
        #expect(got.blankLines == 1)
        #expect(got.ends.last?.endLine == 7)
    }

    @Test func aByteOrderMarkBeforeTheHeaderIsSkipped() throws {
        let got = try read([0xEF, 0xBB, 0xBF] + Array("receipt-data,id\nQUJD,1\n".utf8), ReaderOptions())
        #expect(got.records.map(\.text) == ["QUJD,1"])
        guard case .csv(let h) = got.formats.first else {
            Issue.record("not read as CSV: \(got.formats)")
            return
        }
        #expect(h.columns == ["receipt-data", "id"] && h.receiptColumn == 0)
    }

    @Test func aFirstLineThatIsNoHeaderKeepsTheLineFormats() throws {
        for (text, format) in [
            ("{\"receipt_data\":\"QUJD\"}\n{\"receipt_data\":\"REVG\"}\n", RecordFormat.ndjson),
            ("QUJD\nREVG\n", .base64),
            ("id,payload\n1,QUJD\n", .base64),
            ("\nreceipt_data\n1\n", .base64),
        ] {
            let got = try read(Array(text.utf8), ReaderOptions())
            #expect(got.formats.allSatisfy { $0 == format }, "\(text)")
            #expect(got.records.count == text.split(separator: "\n").count, "\(text)")
        }
        // Without CSV detection (the fuzz reference's line rules) a header is a line like any other.
        var plain = ReaderOptions()
        plain.csvReceiptFields = []
        #expect(try read(Array("receipt_data\nQUJD\n".utf8), plain).records.map(\.text) == ["receipt_data", "QUJD"])
        // With --field, only that name makes a header.
        var named = ReaderOptions()
        named.csvReceiptFields = ["blob"]
        #expect(try read(Array("id,receipt_data\n1,QUJD\n".utf8), named).formats == [.base64])
        #expect(try read(Array("id,blob\n1,QUJD\n".utf8), named).records.map(\.text) == ["1,QUJD"])
    }

    @Test func aHeaderAloneMakesNoRecordWithOrWithoutItsLineEnd() throws {
        for (text, blanks) in [("receipt_data", 0), ("receipt_data\n", 0), ("id,receipt_data\r\n\r\n", 1)] {
            let got = try read(Array(text.utf8), ReaderOptions())
            #expect(got.records.isEmpty, "\(text)")
            #expect(got.blankLines == blanks, "\(text)")
            #expect(got.ends.last?.endLine == 1 + blanks, "\(text)")
        }
    }

    @Test func anUnterminatedQuoteRunsToTheEndOfTheInputAsOneRow() throws {
        let text = "id,receipt\n1,QUJD\n2,\"QU\nJD\n3,QUJD\n"
        let got = try read(Array(text.utf8), ReaderOptions())
        #expect(got.records.map(\.line) == [2, 3])
        #expect(got.records.last?.text == "2,\"QU\nJD\n3,QUJD\n")
    }

    @Test func aRowOverTheSizeLimitIsOneTooLargeRecordAndTheNextRowIsRead() throws {
        let options = ReaderOptions(maxRecordSize: 32, batchBytes: 64, maxRecordsPerBatch: 4)
        let huge = "\"" + String(repeating: "x\n", count: 200) + "\",1"
        let text = "receipt,id\nQUJD,1\n\(huge)\nREVG,2\n" + String(repeating: "Z", count: 100) + "\nR0hJ,3"
        for chunk in [1, 3, 7, 64, 1 << 20] {
            let got = try read(Array(text.utf8), options, chunk: chunk)
            #expect(got.records.map(\.line) == [2, 3, 204, 205, 206], "chunk \(chunk)")
            #expect(got.records.map(\.tooLarge) == [false, true, false, true, false], "chunk \(chunk)")
            #expect(got.records.map(\.text) == ["QUJD,1", "", "REVG,2", "", "R0hJ,3"], "chunk \(chunk)")
        }
    }

    /// Random CSV bodies through small batches and every arrival: the reader's rows, line numbers, too-large rows
    /// and blank lines are the reference's, and a run resumed after any batch reads exactly the records after it.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func randomBytesGiveTheReferenceRowsAndResumeAfterAnyBatch(seed: UInt64) throws {
        let options = ReaderOptions(maxRecordSize: 48, batchBytes: 160, maxRecordsPerBatch: 5)
        let body = randomBody(seed: seed, rows: 300)
        let want = referenceRows(body, firstLine: 2, maxSize: options.maxRecordSize)
        for chunk in [1, 5, 13, 100, 1 << 20] {
            let got = try read(header + body, options, chunk: chunk)
            #expect(got.records.count == want.records.count, "seed \(seed) chunk \(chunk)")
            let firstDiff = zip(got.records, want.records).enumerated().first { (_, pair) -> Bool in
                pair.0.line != pair.1.line || pair.0.text != pair.1.text || pair.0.tooLarge != pair.1.tooLarge
            }?.offset
            #expect(firstDiff == nil, "seed \(seed) chunk \(chunk): record \(firstDiff ?? -1)")
            #expect(got.blankLines == want.blankLines, "seed \(seed) chunk \(chunk)")
            guard chunk == 13 else { continue }
            for (endLine, before) in got.ends {
                let resumed = try read(header + body, options, chunk: chunk, skip: endLine)
                #expect(resumed.records.map(\.line) == got.records.dropFirst(before).map(\.line), "after \(endLine)")
            }
        }
        // Any bytes at all after the header: the rows split into fields without reading outside them.
        for r in want.records where !r.tooLarge {
            var row = Array(r.text.utf8)
            let ok = row.withUnsafeMutableBytes { p -> Bool in
                let bytes = UnsafeRawBufferPointer(p)
                var inside = true
                let out = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
                defer { out.deallocate() }
                _ = CSVFields.split(bytes) { _, cell in
                    inside = inside && cell.range.lowerBound >= 0 && cell.range.upperBound <= bytes.count
                    if cell.escaped { inside = inside && CSVFields.unescape(bytes, cell, into: out) < cell.range.count }
                }
                return inside
            }
            #expect(ok, "\(r.text)")
            row.removeAll()
        }
    }

    /// The committed inputs of the `csv` fuzz target (Fuzz/corpus/csv), with its options and arrival: the reader's
    /// rows are the reference's.
    @Test func theCSVFuzzCorpusReadsAsTheReferenceRows() throws {
        let options = ReaderOptions(maxRecordSize: 64, batchBytes: 256, maxRecordsPerBatch: 4)
        let dir = Fixtures.packageRoot.appendingPathComponent("Fuzz/corpus/csv")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix(".") }
        #expect(names.count >= 3)
        for name in names.sorted() {
            let body = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
            let last = body.last ?? 0
            let chunk = last & 1 == 1 ? 1 + Int(last >> 1) : 1 << 20
            let got = try read(header + body, options, chunk: chunk)
            let want = referenceRows(body, firstLine: 2, maxSize: options.maxRecordSize)
            #expect(got.records.map(\.line) == want.records.map(\.line), "\(name)")
            #expect(got.records.map(\.text) == want.records.map(\.text), "\(name)")
            #expect(got.blankLines == want.blankLines, "\(name)")
        }
    }
}
