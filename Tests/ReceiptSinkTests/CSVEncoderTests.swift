import ReceiptModel
import Testing

@testable import ReceiptSink

@Suite struct CSVEncoderTests {
    func field(_ s: String) -> String {
        var out: [UInt8] = []
        var s = s
        s.withUTF8 { CSVEncoder.appendField(UnsafeRawBufferPointer($0), into: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func quotesOnlyWhenRFC4180RequiresIt() {
        #expect(field("plain text") == "plain text")
        #expect(field("a,b") == "\"a,b\"")
        #expect(field("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(field("two\nlines") == "\"two\nlines\"")
        #expect(field("cr\rhere") == "\"cr\rhere\"")
        #expect(field("ünïcødé 🧾") == "ünïcødé 🧾")
    }

    @Test func rendersNullsEmptyStringsTimestampsAndBooleans() {
        let schema = TableSchema(
            name: "t", [("s", .string, true), ("ts", .timestampMillis, true), ("b", .bool, true), ("n", .int32, true)])
        var t = ColumnTable(schema: schema)
        t.append(string: 0, "")
        t.append(int64: 0, 1_565_243_000_000)
        t.append(bool: 0, true)
        t.append(int32: 0, -5)
        t.rowCount += 1
        t.append(string: 0, nil as String?)
        t.append(int64: 0, nil)
        t.append(bool: 0, false)
        t.append(int32: 0, nil)
        t.rowCount += 1
        var out: [UInt8] = []
        CSVEncoder.appendHeader(schema, into: &out)
        CSVEncoder.appendRows(t, rows: 0..<2, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "s,ts,b,n\n\"\",2019-08-08T05:43:20.000Z,true,-5\n,,false,\n")
    }
}
