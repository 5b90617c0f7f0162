import ReceiptModel

/// Why a row was rejected, as text written straight into the `error_detail` column (no String per record).
enum Detail {
    case none
    /// A static sentence, with the byte offset where the problem was seen when it is not negative.
    case text(StaticString, at: Int)
    /// A sentence built by the verifier (only on failures).
    case string(String)

    init(_ e: ReceiptError) { self = .text(e.reason, at: e.offset) }
}

extension StringColumn {
    /// Appends `detail`; a static reason left empty falls back to the error code with spaces.
    mutating func append(_ detail: Detail, code: ErrorCode?) {
        switch detail {
        case .none:
            appendNull()
        case .string(let s):
            append(s)
        case .text(let reason, let at):
            if reason.utf8CodeUnitCount > 0 {
                reason.withUTF8Buffer { bytes.append(contentsOf: $0) }
            } else if let code {
                for c in code.rawValue.utf8 { bytes.append(c == UInt8(ascii: "_") ? 0x20 : c) }
            }
            if at >= 0 {
                let prefix: StaticString = " (at byte "
                prefix.withUTF8Buffer { bytes.append(contentsOf: $0) }
                appendDecimal(at)
                bytes.append(UInt8(ascii: ")"))
            }
            offsets.append(Int32(truncatingIfNeeded: bytes.count))
            valid.append(true)
        }
    }

    /// Appends the bytes of `range` in `base`, or null when absent or (defensively) out of range.
    @inline(__always) mutating func append(_ range: Range<Int>?, in base: UnsafeRawBufferPointer) {
        guard let range, range.lowerBound >= 0, range.upperBound <= base.count else { return appendNull() }
        append(UnsafeRawBufferPointer(rebasing: base[range]))
    }

    /// Appends `text` or null.
    @inline(__always) mutating func append(optional text: UnsafeRawBufferPointer?) {
        guard let text else { return appendNull() }
        append(text)
    }

    private mutating func appendDecimal(_ v: Int) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: enough for any Int
        var n = 0
        var x = v
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[n] = UInt8(ascii: "0") + UInt8(x % 10)
                x /= 10
                n += 1
            } while x > 0
            for k in stride(from: n - 1, through: 0, by: -1) { bytes.append(d[k]) }
        }
    }
}

extension PrimitiveColumn where T == Int32 {
    /// Appends `v` when it fits 32 bits, else null (the contract's int32 columns hold small receipt numbers).
    @inline(__always) mutating func append(narrowing v: Int64?) { append(v.flatMap { Int32(exactly: $0) }) }
}
