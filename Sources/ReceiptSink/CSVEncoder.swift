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
        // Column data is reached through nested subscripts of the borrowed table rather than bound to locals,
        // which would retain and release every column's buffers for every field.
        let columns = table.schema.columns
        for r in rows {
            for i in 0..<columns.count {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                let slot = columns[i].slot
                switch columns[i].kind {
                case .string:
                    guard table.strings[slot].valid[r] else { continue }
                    let start = Int(table.strings[slot].offsets[r])
                    let end = Int(table.strings[slot].offsets[r + 1])
                    if start == end {
                        out.append(UInt8(ascii: "\""))
                        out.append(UInt8(ascii: "\""))
                    } else {
                        table.strings[slot].bytes.withUnsafeBytes {
                            appendField(UnsafeRawBufferPointer(rebasing: $0[start..<end]), into: &out)
                        }
                    }
                case .int64:
                    if table.int64s[slot].valid[r] { DecimalText.append(table.int64s[slot].values[r], into: &out) }
                case .timestampMillis:
                    if table.int64s[slot].valid[r] {
                        CivilTime.appendISO8601(epochMillis: table.int64s[slot].values[r], into: &out)
                    }
                case .int32:
                    if table.int32s[slot].valid[r] {
                        DecimalText.append(Int64(table.int32s[slot].values[r]), into: &out)
                    }
                case .bool:
                    if table.bools[slot].valid[r] {
                        out.append(contentsOf: table.bools[slot].values[r] ? trueBytes : falseBytes)
                    }
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
