import ReceiptModel

/// Why a row was rejected, as text written straight into the `error_detail` column (no String per record).
public enum Detail: Sendable {
    case none
    /// A static sentence, with the byte offset where the problem was seen when it is not negative.
    case text(StaticString, at: Int)
    /// A sentence built by the verifier (only on failures).
    case string(String)

    public init(_ e: ReceiptError) { self = .text(e.reason, at: e.offset) }

    /// The sentence the `error_detail` column holds for this detail (nil for `none`), as a String: a static reason
    /// left empty falls back to `code` with spaces, as in the column.
    public func text(code: ErrorCode?) -> String? {
        switch self {
        case .none:
            return nil
        case .string(let s):
            return s
        case .text(let reason, let at):
            var s =
                reason.utf8CodeUnitCount > 0 ? "\(reason)" : String((code?.rawValue ?? "").map { $0 == "_" ? " " : $0 })
            if at >= 0 { s += " (at byte \(at))" }
            return s
        }
    }
}

extension ColumnRowWriter {
    /// Appends `detail` to string column `slot`; a static reason left empty falls back to the error code with spaces.
    mutating func string(_ slot: Int, detail: Detail, code: ErrorCode?) {
        switch detail {
        case .none:
            null(string: slot)
        case .string(let s):
            string(slot, s)
        case .text(let reason, let at):
            string(slot) { b in
                if reason.utf8CodeUnitCount > 0 {
                    b.append(reason)
                } else if let code {
                    for c in code.rawValue.utf8 { b.append(c == UInt8(ascii: "_") ? 0x20 : c) }
                }
                if at >= 0 {
                    b.append(" (at byte " as StaticString)
                    Self.appendDecimal(at, &b)
                    b.append(UInt8(ascii: ")"))
                }
            }
        }
    }

    /// Appends the bytes of `range` in `base`, or null when absent or (defensively) out of range.
    @inline(__always) mutating func string(_ slot: Int, _ range: Range<Int>?, in base: UnsafeRawBufferPointer) {
        guard let range, range.lowerBound >= 0, range.upperBound <= base.count else { return null(string: slot) }
        string(slot, UnsafeRawBufferPointer(rebasing: base[range]))
    }

    /// Appends `v` to int32 column `slot` when it fits 32 bits, else null (the contract's int32 columns hold small
    /// receipt numbers).
    @inline(__always) mutating func int32(_ slot: Int, narrowing v: Int64?) {
        int32(slot, v.flatMap { Int32(exactly: $0) })
    }

    private static func appendDecimal(_ v: Int, _ b: inout StringValueBuilder) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: enough for any Int
        var n = 0
        var x = v
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[n] = UInt8(ascii: "0") + UInt8(x % 10)
                x /= 10
                n += 1
            } while x > 0
            for k in stride(from: n - 1, through: 0, by: -1) { b.append(d[k]) }
        }
    }
}

enum RowBytes {
    /// The bytes of `range` in `base`, or nil when absent or (defensively) out of range (as
    /// `ColumnRowWriter.string(_:_:in:)`, for `ColumnBlockWriter`).
    @inline(__always) static func text(_ range: Range<Int>?, in base: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?
    {
        guard let range, range.lowerBound >= 0, range.upperBound <= base.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: base[range])
    }

    /// `v` when it fits 32 bits, else nil (as `ColumnRowWriter.int32(_:narrowing:)`).
    @inline(__always) static func narrow(_ v: Int64?) -> Int32? { v.flatMap { Int32(exactly: $0) } }
}
