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
        precondition(rows.upperBound <= table.rowCount && table.isConsistent, "rows beyond the table")
        // One view per column, taken once (on the stack): each view holds its column's pointers.
        withViews(table.strings.count, { table.strings[$0] }) { strings in
            withViews(table.int64s.count, { table.int64s[$0] }) { int64s in
                withViews(table.int32s.count, { table.int32s[$0] }) { int32s in
                    withViews(table.bools.count, { table.bools[$0] }) { bools in
                        appendRows(table.schema, rows, strings, int64s, int32s, bools, into: &out)
                    }
                }
            }
        }
    }

    private static func withViews<V>(_ n: Int, _ view: (Int) -> V, _ body: (UnsafeBufferPointer<V>) -> Void) {
        withUnsafeTemporaryAllocation(of: V.self, capacity: n) { buffer in
            // Slots 0..<n are within the n-element allocation; each is initialized once and deinitialized below.
            for i in 0..<n { (buffer.baseAddress! + i).initialize(to: view(i)) }
            body(UnsafeBufferPointer(buffer))
            buffer.baseAddress?.deinitialize(count: n)
        }
    }

    private static func appendRows(
        _ schema: TableSchema, _ rows: Range<Int>, _ strings: UnsafeBufferPointer<StringColumn>,
        _ int64s: UnsafeBufferPointer<PrimitiveColumn<Int64>>, _ int32s: UnsafeBufferPointer<PrimitiveColumn<Int32>>,
        _ bools: UnsafeBufferPointer<PrimitiveColumn<Bool>>, into out: inout [UInt8]
    ) {
        let columns = schema.columns
        for r in rows {
            for i in 0..<columns.count {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                let slot = columns[i].slot
                switch columns[i].kind {
                case .string:
                    // r < rowCount == every column's count (checked on entry); slot < the view count (schema).
                    guard strings[slot].valid[r] else { continue }
                    if strings[slot].offsets[r] == strings[slot].offsets[r + 1] {
                        out.append(UInt8(ascii: "\""))
                        out.append(UInt8(ascii: "\""))
                    } else {
                        strings[slot].withBytes(r) { appendField($0, into: &out) }
                    }
                case .int64:
                    if int64s[slot].valid[r] { DecimalText.append(int64s[slot].values[r], into: &out) }
                case .timestampMillis:
                    if int64s[slot].valid[r] {
                        CivilTime.appendISO8601(epochMillis: int64s[slot].values[r], into: &out)
                    }
                case .int32:
                    if int32s[slot].valid[r] { DecimalText.append(Int64(int32s[slot].values[r]), into: &out) }
                case .bool:
                    if bools[slot].valid[r] { out.append(contentsOf: bools[slot].values[r] ? trueBytes : falseBytes) }
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
