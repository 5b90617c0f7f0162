import ReceiptModel
import Testing

@testable import ReceiptSink

/// Reproduces the byte-level walkthrough of parquet-notes.md A.4 (an OPTIONAL string column
/// `name` = ["alpha", null, "gamma"], one uncompressed PLAIN data page).
@Suite struct ParquetColumnWriterTests {
    @Test func dataPageHeaderMatchesTheWalkthrough() {
        var w = ThriftCompactWriter()
        ParquetColumnWriter.dataPageHeader(&w, uncompressed: 24, compressed: 24, numValues: 3, encoding: .plain)
        #expect(
            w.bytes == [
                0x15, 0x00, 0x15, 0x30, 0x15, 0x30, 0x2C, 0x15, 0x06, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06, 0x00, 0x00,
            ])
    }

    @Test func definitionLevelsOfTheWalkthroughAreOneBitPackedGroup() {
        var out = ByteBuffer()
        let levels: [UInt8] = [1, 0, 1]
        levels.withUnsafeBufferPointer { RLEHybrid.encode($0, bitWidth: 1, into: &out) }
        #expect(Array(out.bytes) == [0x03, 0x05])
    }

    @Test func zstdPagesRoundTripThroughAFile() throws {
        // A whole file through the writer, checked only for its frame: magic at both ends, footer length in range.
        let dir = "/tmp/receiptflow-sinktests-\(getpidValue())-frame"
        let sink = try makeSink(format: .parquet, directory: dir, metadata: RunMetadata())
        var batch = ColumnBatch(sequence: 0)
        for i in 0..<10 {
            appendReceiptRow(&batch.receipts, line: Int64(i + 1), bundle: i % 2 == 0 ? "com.a" : nil)
        }
        try sink.write(batch)
        try sink.finish()
        let bytes = try readFile(dir + "/receipts.parquet")
        #expect(Array(bytes.prefix(4)) == Array("PAR1".utf8))
        #expect(Array(bytes.suffix(4)) == Array("PAR1".utf8))
        let n = bytes.count
        let footerLength =
            Int(bytes[n - 8]) | Int(bytes[n - 7]) << 8 | Int(bytes[n - 6]) << 16 | Int(bytes[n - 5]) << 24
        #expect(footerLength > 0 && footerLength < n - 12)
    }
}
