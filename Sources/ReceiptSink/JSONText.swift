/// JSON text fragments appended to byte buffers, without Foundation.
public enum JSONText {
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `s` as a JSON string literal: quotes, backslashes and control characters escaped, the rest as is.
    public static func appendString(_ s: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        for i in 0..<s.count {
            let b = s[i]
            guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: s[runStart..<i]))  // runStart <= i < count
            runStart = i + 1
            out.append(UInt8(ascii: "\\"))
            switch b {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            default:
                out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]])
            }
        }
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: s[runStart..<s.count]))
        out.append(UInt8(ascii: "\""))
    }

    public static func appendString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { appendString(UnsafeRawBufferPointer($0), into: &out) }
    }

    /// Appends `["a","b"]`.
    public static func appendStringArray(_ a: [String], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, s) in a.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            appendString(s, into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}
