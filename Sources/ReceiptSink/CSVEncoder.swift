import ReceiptModel

/// Renders table rows as RFC 4180 CSV: a header row, `\n` line ends, fields quoted when they contain a comma,
/// a double quote, CR or LF (quotes doubled). Nulls are empty fields; an empty (non-null) string is `""` so that
/// readers can tell the two apart. Timestamps are `2019-08-08T05:43:20.000Z`, booleans `true`/`false`.
///
/// A string cell whose text begins with `=`, `+`, `-`, `@`, a tab or a carriage return is one a spreadsheet would
/// run as a formula (any input can put such text in a `record_id` or a decoded field): unless `raw`, it is written
/// with a leading apostrophe, which spreadsheets read as "text" and drop from the shown value. Integers, timestamps
/// and booleans are the writer's own text, never a formula, and are written as they are (`-5` stays `-5`).
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

    /// One column's buffers as plain pointers, so that reading a field retains nothing (a column view holds a
    /// reference to the table's storage: copying one per field would be a retain and a release per field).
    private struct Field {
        var kind: ColumnKind
        var valid: UnsafePointer<Bool>
        /// Int64, Int32 or Bool values, or a string column's bytes.
        var values: UnsafeRawPointer
        /// A string column's offsets (`count + 1` entries).
        var offsets: UnsafePointer<Int>?
    }

    /// Appends rows `rows` of `table`, one line each; `raw` writes string cells byte for byte (`--csv-raw`),
    /// without the apostrophe before a formula.
    public static func appendRows(_ table: ColumnTable, rows: Range<Int>, raw: Bool = false, into out: inout [UInt8]) {
        precondition(rows.upperBound <= table.rowCount && table.isConsistent, "rows beyond the table")
        let columns = table.schema.columns
        // The table (borrowed for the whole call) keeps the buffers alive; the fields point into them.
        withExtendedLifetime(table) {
            withUnsafeTemporaryAllocation(of: Field.self, capacity: columns.count) { fields in
                // Index i < columns.count, the allocation's size; every slot is initialized before the rows.
                for (i, c) in columns.enumerated() {
                    (fields.baseAddress! + i).initialize(to: field(table, c))
                }
                appendRows(UnsafeBufferPointer(fields), rows, raw: raw, into: &out)
            }
        }
    }

    /// The pointers of column `c`. A column's buffers always exist, so the base addresses are not nil.
    private static func field(_ table: ColumnTable, _ c: ColumnSpec) -> Field {
        switch c.kind {
        case .string:
            let v = table.strings[c.slot]
            return Field(
                kind: c.kind, valid: v.valid.baseAddress!, values: v.bytes.baseAddress!, offsets: v.offsets.baseAddress)
        case .int64, .timestampMillis:
            let v = table.int64s[c.slot]
            return Field(kind: c.kind, valid: v.valid.baseAddress!, values: UnsafeRawPointer(v.values.baseAddress!))
        case .int32, .date:
            let v = table.int32s[c.slot]
            return Field(kind: c.kind, valid: v.valid.baseAddress!, values: UnsafeRawPointer(v.values.baseAddress!))
        case .bool:
            let v = table.bools[c.slot]
            return Field(kind: c.kind, valid: v.valid.baseAddress!, values: UnsafeRawPointer(v.values.baseAddress!))
        }
    }

    private static func appendRows(
        _ fields: UnsafeBufferPointer<Field>, _ rows: Range<Int>, raw: Bool, into out: inout [UInt8]
    ) {
        for r in rows {
            for i in 0..<fields.count {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                // In range: r < rowCount == every column's count (checked on entry), and a string column's
                // offsets[r] <= offsets[r + 1] <= its byte count.
                let f = fields[i]
                guard f.valid[r] else { continue }
                switch f.kind {
                case .string:
                    let start = f.offsets![r]
                    let end = f.offsets![r + 1]
                    if start == end {
                        out.append(UInt8(ascii: "\""))
                        out.append(UInt8(ascii: "\""))
                    } else {
                        appendField(
                            UnsafeRawBufferPointer(start: f.values + start, count: end - start), neutralizing: !raw,
                            into: &out)
                    }
                case .int64:
                    DecimalText.append(f.values.load(fromByteOffset: r * 8, as: Int64.self), into: &out)
                case .timestampMillis:
                    CivilTime.appendISO8601(
                        epochMillis: f.values.load(fromByteOffset: r * 8, as: Int64.self), into: &out)
                case .int32:
                    DecimalText.append(Int64(f.values.load(fromByteOffset: r * 4, as: Int32.self)), into: &out)
                case .date:
                    CivilTime.appendDate(days: Int64(f.values.load(fromByteOffset: r * 4, as: Int32.self)), into: &out)
                case .bool:
                    out.append(contentsOf: f.values.load(fromByteOffset: r, as: Bool.self) ? trueBytes : falseBytes)
                }
            }
            out.append(0x0A)
        }
    }

    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)

    /// True when a spreadsheet would read a cell of text `v` as a formula: it begins with `=`, `+`, `-`, `@`, a tab
    /// or a carriage return.
    public static func startsFormula(_ v: UnsafeRawBufferPointer) -> Bool {
        guard let b = v.first else { return false }
        return b == UInt8(ascii: "=") || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") || b == UInt8(ascii: "@")
            || b == 0x09 || b == 0x0D
    }

    /// Appends one field, quoted when RFC 4180 requires it; with `neutralizing`, a field that `startsFormula`
    /// gets a leading apostrophe (inside the quotes when it is quoted).
    public static func appendField(_ v: UnsafeRawBufferPointer, neutralizing: Bool = false, into out: inout [UInt8]) {
        let apostrophe = neutralizing && startsFormula(v)
        var needsQuotes = false
        for b in v where b == UInt8(ascii: ",") || b == UInt8(ascii: "\"") || b == 0x0A || b == 0x0D {
            needsQuotes = true
            break
        }
        guard needsQuotes else {
            if apostrophe { out.append(UInt8(ascii: "'")) }
            out.append(contentsOf: v)
            return
        }
        out.append(UInt8(ascii: "\""))
        if apostrophe { out.append(UInt8(ascii: "'")) }
        for b in v {
            if b == UInt8(ascii: "\"") { out.append(b) }
            out.append(b)
        }
        out.append(UInt8(ascii: "\""))
    }
}
