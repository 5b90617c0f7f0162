/// Finds where CSV rows end: at a line feed outside quotes (RFC 4180). A quote opens a quoted field only at the
/// start of a field, as `CSVFields.split` reads it, so the framer and the splitter agree on every row, malformed
/// ones included; a quote that is never closed runs to the end of the input (or of `--max-record-size`).
public enum CSVFramer {
    /// Where the scan stands in a row.
    public enum State: UInt8, Sendable {
        /// At the start of a field.
        case fieldStart
        /// Inside a field that did not begin with a quote.
        case unquoted
        /// Inside a quoted field.
        case quoted
        /// Just after a quote inside a quoted field: the field's end, or the first of a doubled quote.
        case quoteInQuoted
    }

    /// Scans `buf[from..<to]` in `state`; returns the offset of the line feed that ends the row, or nil when the row
    /// goes on past `to`. Line feeds inside quoted fields are counted in `newlines`. In range: the caller's `to`
    /// is at most the buffer's filled count.
    @inline(__always)
    public static func rowEnd(
        _ buf: UnsafeRawPointer, from: Int, to: Int, state: inout State, newlines: inout Int
    ) -> Int? {
        var i = from
        var s = state
        defer { state = s }
        while i < to {
            let b = buf.load(fromByteOffset: i, as: UInt8.self)
            switch s {
            case .quoted:
                if b == 0x22 {
                    s = .quoteInQuoted
                } else if b == 0x0A {
                    newlines += 1
                }
            case .unquoted:
                if b == 0x2C {
                    s = .fieldStart
                } else if b == 0x0A {
                    return i
                }
            case .fieldStart, .quoteInQuoted:
                if b == 0x0A { return i }
                if b == 0x2C {
                    s = .fieldStart
                } else if b == 0x22 {
                    s = .quoted
                } else {
                    s = .unquoted
                }
            }
            i += 1
        }
        return nil
    }
}
