import ReceiptModel
import Testing

@testable import ReceiptSink

@Suite struct ParquetFooterTests {
    /// The schema of parquet-notes.md A.4's `min2.parquet`: `id` (REQUIRED INT64) and `name` (OPTIONAL string).
    static let min2 = TableSchema(name: "min2", [("id", .int64, false), ("name", .string, true)])

    @Test func optionalStringLeafMatchesTheWalkthrough() {
        var w = ThriftCompactWriter()
        ParquetFooter.schemaElement(Self.min2.columns[1], into: &w)
        let expected: [UInt8] =
            [0x15, 0x0C, 0x25, 0x02, 0x18, 0x04] + Array("name".utf8) + [
                0x25, 0x00, 0x4C, 0x1C, 0x00, 0x00, 0x00,
            ]
        #expect(w.bytes == expected)
    }

    @Test func footerStartsAndEndsAsInTheWalkthrough() {
        var w = ThriftCompactWriter()
        ParquetFooter.encode(
            schema: Self.min2, rowGroups: [], numRows: 0, keyValues: [],
            createdBy: "minipq version 0.1 (build none)", into: &w)
        let head: [UInt8] = [0x15, 0x02, 0x19, 0x3C, 0x48, 0x06] + Array("schema".utf8) + [0x15, 0x04, 0x00]
        #expect(Array(w.bytes.prefix(head.count)) == head)
        let tail: [UInt8] =
            [0x28, 0x1F] + Array("minipq version 0.1 (build none)".utf8) + [
                0x19, 0x2C, 0x1C, 0x00, 0x00, 0x1C, 0x00, 0x00, 0x00,
            ]
        #expect(Array(w.bytes.suffix(tail.count)) == tail)
    }

    @Test func timestampLeafIsMillisAdjustedToUTC() {
        let s = TableSchema(name: "t", [("ts", .timestampMillis, true)])
        var w = ThriftCompactWriter()
        ParquetFooter.schemaElement(s.columns[0], into: &w)
        // INT64, OPTIONAL, "ts", converted TIMESTAMP_MILLIS (9), logicalType {8: {1: true, 2: {1: {}}}}.
        let expected: [UInt8] =
            [0x15, 0x04, 0x25, 0x02, 0x18, 0x02] + Array("ts".utf8) + [
                0x25, 0x12, 0x4C, 0x8C, 0x11, 0x1C, 0x1C, 0x00, 0x00, 0x00, 0x00, 0x00,
            ]
        #expect(w.bytes == expected)
    }
}
