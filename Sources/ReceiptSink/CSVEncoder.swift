import ReceiptModel

/// Renders table rows as RFC 4180 CSV: a header row, `\n` line ends, fields quoted when they contain a comma,
/// a double quote, CR or LF (quotes doubled). Nulls are empty fields; an empty (non-null) string is `""` so that
/// readers can tell the two apart. Timestamps are `2019-08-08T05:43:20.000Z`, booleans `true`/`false`.
public enum CSVEncoder {
    /// Appends the header row of `schema`.
    public static func appendHeader(_ schema: TableSchema, into out: inout [UInt8]) {
        for (i, c) in schema.columns.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            var name = c.name
            name.withUTF8 { appendField(UnsafeRawBufferPointer($0), into: &out) }
        }
        out.append(0x0A)
    }

    /// Appends rows `rows` of `table`, one line each.
    public static func appendRows(_ table: ColumnTable, rows: Range<Int>, into out: inout [UInt8]) {
        let columns = table.schema.columns
        for r in rows {
            for (i, c) in columns.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                switch c.kind {
                case .string:
                    let col = table.strings[c.slot]
                    guard col.valid[r] else { continue }
                    col.withBytes(r) { v in
                        if v.isEmpty {
                            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "\"")])
                        } else {
                            appendField(v, into: &out)
                        }
                    }
                case .int64:
                    let col = table.int64s[c.slot]
                    if col.valid[r] { DecimalText.append(col.values[r], into: &out) }
                case .timestampMillis:
                    let col = table.int64s[c.slot]
                    if col.valid[r] { CivilTime.appendISO8601(epochMillis: col.values[r], into: &out) }
                case .int32:
                    let col = table.int32s[c.slot]
                    if col.valid[r] { DecimalText.append(Int64(col.values[r]), into: &out) }
                case .bool:
                    let col = table.bools[c.slot]
                    if col.valid[r] { out.append(contentsOf: col.values[r] ? trueBytes : falseBytes) }
                }
            }
            out.append(0x0A)
        }
    }

    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)

    /// Appends one field, quoted when RFC 4180 requires it.
    public static func appendField(_ v: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var needsQuotes = false
        for b in v where b == UInt8(ascii: ",") || b == UInt8(ascii: "\"") || b == 0x0A || b == 0x0D {
            needsQuotes = true
            break
        }
        guard needsQuotes else {
            out.append(contentsOf: v)
            return
        }
        out.append(UInt8(ascii: "\""))
        for b in v {
            if b == UInt8(ascii: "\"") { out.append(b) }
            out.append(b)
        }
        out.append(UInt8(ascii: "\""))
    }
}
