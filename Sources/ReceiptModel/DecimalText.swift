/// Decimal integer formatting into byte buffers, without `String`.
public enum DecimalText {
    /// Appends `v` in decimal.
    @inlinable public static func append(_ v: UInt64, into out: inout [UInt8]) {
        if v < 10 {
            out.append(UInt8(truncatingIfNeeded: v) &+ 48)  // 48...57, a single digit
            return
        }
        // UInt64.max has 20 digits: fill a 24-byte stack buffer from the right, then copy the digits once.
        var buf: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var n = 0
        var x = v
        withUnsafeMutableBytes(of: &buf) { p in
            while x > 0 {
                p[23 - n] = UInt8(truncatingIfNeeded: x % 10) &+ 48  // n < 20 <= 24: in range
                x /= 10
                n += 1
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: p[(24 - n)...]))
        }
    }

    /// Appends `v` in decimal with a leading `-` when negative (exact for Int64.min).
    @inlinable public static func append(_ v: Int64, into out: inout [UInt8]) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        append(UInt64(v.magnitude), into: &out)
    }
}
