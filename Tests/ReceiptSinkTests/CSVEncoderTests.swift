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

    // MARK: - Formulas

    /// The cell texts spreadsheets run as formulas (Excel, LibreOffice, Google Sheets), each with the field the
    /// encoder must write for it: an apostrophe first, then RFC 4180 quoting when the text needs it.
    static let formulas: [(text: String, field: String)] = [
        (#"=HYPERLINK("http://x")"#, #""'=HYPERLINK(""http://x"")""#),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "\"'\r=1\""),
        ("=1,2", "\"'=1,2\""),
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("-", "'-"),
    ]

    func field(_ s: String, neutralizing: Bool) -> String {
        var out: [UInt8] = []
        var s = s
        s.withUTF8 { CSVEncoder.appendField(UnsafeRawBufferPointer($0), neutralizing: neutralizing, into: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func aCellASpreadsheetWouldRunAsAFormulaGetsALeadingApostropheInsideItsQuotes() {
        for (text, want) in Self.formulas {
            #expect(field(text, neutralizing: true) == want, "\(text.debugDescription)")
            // Read back as RFC 4180, the cell is the text after the apostrophe.
            #expect(Self.cells(field(text, neutralizing: true)) == ["'" + text], "\(text.debugDescription)")
        }
    }

    @Test func otherCellsAndRawOnesAreWrittenAsTheyAre() {
        // A formula character later in the text, or after a space or an apostrophe, is not at the start.
        for text in ["a=1", " =1", "1-2", "'=1", "x,=1", "com.example.app", "ünï", "\n=1"] {
            #expect(field(text, neutralizing: true) == field(text, neutralizing: false), "\(text.debugDescription)")
        }
        #expect(field("a,=1", neutralizing: true) == "\"a,=1\"")
        for (text, _) in Self.formulas {
            #expect(Self.cells(field(text, neutralizing: false)) == [text], "\(text.debugDescription)")
        }
    }

    @Test func stringColumnsAreNeutralizedAndIntegerColumnsStayNumbers() {
        let schema = TableSchema(
            name: "t",
            [("s", .string, true), ("n", .int64, true), ("m", .int32, true), ("ts", .timestampMillis, true)])
        var t = ColumnTable(schema: schema)
        for (i, (text, _)) in Self.formulas.enumerated() {
            t.append(string: 0, text)
            t.append(int64: 0, -Int64(i) - 1)
            t.append(int32: 0, -Int32(i) - 7)
            t.append(int64: 1, -86_400_000)  // 1969-12-31: a timestamp before the epoch
            t.rowCount += 1
        }
        var safe: [UInt8] = []
        CSVEncoder.appendRows(t, rows: 0..<t.rowCount, into: &safe)
        var raw: [UInt8] = []
        CSVEncoder.appendRows(t, rows: 0..<t.rowCount, raw: true, into: &raw)
        let safeRows = Self.rows(String(decoding: safe, as: UTF8.self))
        let rawRows = Self.rows(String(decoding: raw, as: UTF8.self))
        #expect(safeRows.count == Self.formulas.count && rawRows.count == Self.formulas.count)
        for (i, (text, _)) in Self.formulas.enumerated() where i < safeRows.count && i < rawRows.count {
            #expect(safeRows[i] == ["'" + text, "\(-i - 1)", "\(-i - 7)", "1969-12-31T00:00:00.000Z"])
            #expect(rawRows[i] == [text, "\(-i - 1)", "\(-i - 7)", "1969-12-31T00:00:00.000Z"])
        }
    }

    @Test func dateColumnsAreCalendarDaysAndNullsStayEmpty() {
        let schema = TableSchema(name: "t", [("d", .date, true), ("n", .int32, true)])
        var t = ColumnTable(schema: schema)
        for (d, n) in [(Int32(0), Int32(1)), (19_723 + 59, 2), (-1, 3)] {
            t.append(int32: 0, d)
            t.append(int32: 1, n)
            t.rowCount += 1
        }
        t.append(int32: 0, nil)
        t.append(int32: 1, 4)
        t.rowCount += 1
        var out: [UInt8] = []
        CSVEncoder.appendRows(t, rows: 0..<t.rowCount, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "1970-01-01,1\n2024-02-29,2\n1969-12-31,3\n,4\n")
    }

    /// The cells of one CSV line (RFC 4180: quoted fields may hold commas, CR, LF and doubled quotes).
    static func cells(_ line: String) -> [String] { rows(line + "\n").first ?? [] }

    /// The rows of CSV text, each line ended by `\n`.
    static func rows(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var cell = ""
        var quoted = false
        var chars = Array(text.unicodeScalars)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" {
                        cell.unicodeScalars.append(c)
                        chars.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    cell.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                row.append(cell)
                cell = ""
            } else if c == "\n" {
                row.append(cell)
                rows.append(row)
                row = []
                cell = ""
            } else {
                cell.unicodeScalars.append(c)
            }
        }
        return rows
    }
}
