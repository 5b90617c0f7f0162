import Foundation
import ReceiptModel
import Testing

@testable import ReceiptSink

@Suite struct PartWriterTests {
    private static func tempDir(_ tag: String) -> String {
        "/tmp/receiptflow-sinktests-\(getpidValue())-parts-\(tag)-\(UUID().uuidString)"
    }

    private static func files(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    private static func batch(lines: ClosedRange<Int64>) -> ColumnBatch {
        var b = ColumnBatch(sequence: 0)
        for l in lines { appendReceiptRow(&b.receipts, line: l, bundle: "com.a") }
        b.ndjson = Array(String(repeating: "{\"status\":0}\n", count: lines.count).utf8)
        return b
    }

    @Test func namesPartsWithFiveDigitsSoThatTheySortInPartOrder() {
        #expect(PartWriter.fileName(0, .parquet) == "part-00000.parquet")
        #expect(PartWriter.fileName(42, .csv) == "part-00042.csv")
        #expect(PartWriter.fileName(99_999, .ndjson) == "part-99999.ndjson")
        let names = (0..<1200).map { PartWriter.fileName($0, .csv) }
        #expect(names.sorted() == names)
        #expect(
            PartWriter.relativePaths(3, .csv) == [
                "receipts/part-00003.csv", "transactions/part-00003.csv", "renewals/part-00003.csv",
            ])
        #expect(PartWriter.relativePaths(3, .ndjson) == ["receipts/part-00003.ndjson"])
    }

    @Test(arguments: OutputFormat.allCases)
    func commitsEachPartUnderItsFinalNameInTheTableFolders(format: OutputFormat) throws {
        let dir = Self.tempDir("commit-\(format.rawValue)")
        let writer = try PartWriter(format: format, directory: dir, metadata: RunMetadata(), firstPart: 7)
        try writer.write(Self.batch(lines: 1...3))
        #expect(writer.rowsInPart == 3)
        // While the part is open only temporary files exist.
        #expect(Self.files(dir + "/receipts").allSatisfy { $0.hasPrefix(".") && $0.hasSuffix(".tmp") })
        #expect(try writer.commitPart() == 7)
        try writer.write(Self.batch(lines: 4...4))
        #expect(try writer.commitPart() == 8)
        #expect(writer.rowsInPart == 0 && !writer.hasOpenPart)
        let ext = format.fileExtension
        #expect(Self.files(dir + "/receipts") == ["part-00007.\(ext)", "part-00008.\(ext)"])
        if format == .ndjson {
            #expect(Self.files(dir) == ["receipts"])
            let text = try String(contentsOfFile: dir + "/receipts/part-00007.ndjson", encoding: .utf8)
            #expect(text.split(separator: "\n").count == 3)
        } else {
            #expect(Self.files(dir + "/transactions") == ["part-00007.\(ext)", "part-00008.\(ext)"])
        }
        if format == .csv {
            // Each part is a complete CSV file: its own header, then its rows.
            let lines = try String(contentsOfFile: dir + "/receipts/part-00008.csv", encoding: .utf8)
                .split(separator: "\n")
            #expect(lines.count == 2 && lines[0].hasPrefix("source,line,"))
            #expect(lines[1].hasPrefix("in.ndjson,4,"))
        }
        if format == .parquet {
            // Each part is a complete Parquet file: magic at both ends (the footer was written).
            let bytes = try readFile(dir + "/receipts/part-00007.parquet")
            #expect(Array(bytes.prefix(4)) == Array("PAR1".utf8) && Array(bytes.suffix(4)) == Array("PAR1".utf8))
        }
    }

    @Test func refusesAPartNumberThatWouldNeedASixthDigit() throws {
        let dir = Self.tempDir("max")
        let writer = try PartWriter(
            format: .csv, directory: dir, metadata: RunMetadata(), firstPart: PartWriter.maxParts - 1)
        #expect(try writer.commitPart() == 99_999)
        #expect(throws: SinkError(.tooManyParts, value: "100000")) { try writer.write(Self.batch(lines: 1...1)) }
        #expect(Self.files(dir + "/receipts") == ["part-99999.csv"])
    }

    @Test func anEmptyCommitStillWritesAFileWithTheSchema() throws {
        let dir = Self.tempDir("empty")
        let writer = try PartWriter(format: .csv, directory: dir, metadata: RunMetadata())
        #expect(try writer.commitPart() == 0)
        let text = try String(contentsOfFile: dir + "/transactions/part-00000.csv", encoding: .utf8)
        #expect(text.split(separator: "\n").count == 1 && text.hasPrefix("source,line,record_id,"))
    }

    @Test(arguments: OutputFormat.allCases)
    func discardingRemovesThePartInProgressAndKeepsCommittedOnes(format: OutputFormat) throws {
        let dir = Self.tempDir("discard-\(format.rawValue)")
        let writer = try PartWriter(format: format, directory: dir, metadata: RunMetadata())
        try writer.write(Self.batch(lines: 1...2))
        try writer.commitPart()
        try writer.write(Self.batch(lines: 3...5))
        writer.discardPart()
        #expect(Self.files(dir + "/receipts") == ["part-00000.\(format.fileExtension)"])
        // The next part reuses the discarded number: nothing of it was committed.
        try writer.write(Self.batch(lines: 3...3))
        #expect(try writer.commitPart() == 1)
    }
}
