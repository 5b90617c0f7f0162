#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One field of a CSV row: its contents (inside the quotes of a quoted field) as a range of the row.
public struct CSVCell: Sendable, Equatable {
    public var range: Range<Int>
    /// The contents hold doubled quotes (`""`): resolve with `CSVFields.unescape` before use.
    public var escaped: Bool

    public init(range: Range<Int>, escaped: Bool) {
        self.range = range
        self.escaped = escaped
    }
}

/// Why a CSV row cannot be split into fields.
public enum CSVProblem: Error, Sendable, Equatable {
    /// A quote inside a field that does not begin with one (at this byte offset).
    case strayQuote(Int)
    /// Something other than a comma or the row's end after a quoted field's closing quote.
    case textAfterQuote(Int)
    /// A quoted field whose closing quote never comes (its opening quote's offset).
    case unterminatedQuote(Int)

    /// The byte offset in the row where the problem was seen.
    public var offset: Int {
        switch self {
        case .strayQuote(let i), .textAfterQuote(let i), .unterminatedQuote(let i): return i
        }
    }

    /// One sentence for `error_detail`.
    public var detail: StaticString {
        switch self {
        case .strayQuote: return "a quote inside a CSV field that does not begin with one"
        case .textAfterQuote: return "text after the closing quote of a quoted CSV field"
        case .unterminatedQuote: return "a quoted CSV field is never closed"
        }
    }
}

/// RFC 4180 field splitting of one row (its terminator excluded): fields are separated by commas; a field that
/// begins with a double quote runs to its closing quote and may hold commas, line breaks and doubled quotes.
/// Allocation-free: each field is handed to a closure as a range of the row.
public enum CSVFields {
    static let quote = UInt8(ascii: "\"")
    static let comma = UInt8(ascii: ",")

    /// Calls `body(index, cell)` for every field of `row` in order; returns the number of fields, or the first
    /// problem (fields before it have been handed out).
    @inline(__always)
    public static func split(_ row: UnsafeRawBufferPointer, _ body: (Int, CSVCell) -> Void)
        -> Swift.Result<Int, CSVProblem>
    {
        let n = row.count
        guard n > 0, let base = row.baseAddress else {
            body(0, CSVCell(range: 0..<0, escaped: false))
            return .success(1)
        }
        var i = 0
        var k = 0
        while true {
            if i < n && row[i] == quote {
                let open = i
                var j = i + 1
                var escaped = false
                while true {
                    // In range: j <= n, and memchr reads base[j..<n].
                    guard let p = memchr(base + j, Int32(quote), n - j) else {
                        return .failure(.unterminatedQuote(open))
                    }
                    let q = base.distance(to: UnsafeRawPointer(p))
                    if q + 1 < n && row[q + 1] == quote {
                        escaped = true
                        j = q + 2
                        continue
                    }
                    body(k, CSVCell(range: (open + 1)..<q, escaped: escaped))
                    k += 1
                    i = q + 1
                    break
                }
                if i == n { return .success(k) }
                guard row[i] == comma else { return .failure(.textAfterQuote(i)) }
                i += 1
            } else {
                // In range: i <= n.
                let end = memchr(base + i, Int32(comma), n - i).map { base.distance(to: UnsafeRawPointer($0)) } ?? n
                if let p = memchr(base + i, Int32(quote), end - i) {
                    return .failure(.strayQuote(base.distance(to: UnsafeRawPointer(p))))
                }
                body(k, CSVCell(range: i..<end, escaped: false))
                k += 1
                if end == n { return .success(k) }
                i = end + 1
            }
        }
    }

    /// Copies `cell`'s contents from `row` into `out` with each doubled quote made one; returns the length.
    /// `out` needs at most `cell.range.count` bytes: unescaping never lengthens.
    public static func unescape(_ row: UnsafeRawBufferPointer, _ cell: CSVCell, into out: UnsafeMutableRawBufferPointer)
        -> Int
    {
        var n = 0
        var i = cell.range.lowerBound
        let end = cell.range.upperBound
        while i < end {
            let b = row[i]
            out[n] = b
            n += 1
            // A quote inside a quoted field is always doubled (`split` checked it): skip its twin.
            i += b == quote ? 2 : 1
        }
        return n
    }
}
