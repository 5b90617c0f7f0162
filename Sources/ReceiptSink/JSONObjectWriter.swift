/// Appends JSON objects and arrays to a byte buffer, compact or indented (two spaces), in the order keys are given.
///
/// Tracks "first member" per nesting level in a bit mask, so it never allocates (nesting deeper than 63 levels
/// is not needed here and trips a precondition).
public struct JSONObjectWriter {
    public let pretty: Bool
    private var depth = 0
    private var firstMask: UInt64 = 0

    public init(pretty: Bool) { self.pretty = pretty }

    private mutating func open(_ c: UInt8, into out: inout [UInt8]) {
        out.append(c)
        depth += 1
        precondition(depth < 64, "JSON nesting too deep")
        firstMask |= 1 << UInt64(depth)
    }

    private mutating func close(_ c: UInt8, into out: inout [UInt8]) {
        let empty = firstMask & (1 << UInt64(depth)) != 0
        firstMask &= ~(1 << UInt64(depth))
        depth -= 1
        if pretty && !empty { newline(into: &out) }
        out.append(c)
    }

    private func newline(into out: inout [UInt8]) {
        out.append(0x0A)
        for _ in 0..<(depth * 2) { out.append(0x20) }
    }

    /// Starts the next member or element: a comma unless first, and the indentation.
    private mutating func separator(into out: inout [UInt8]) {
        let bit: UInt64 = 1 << UInt64(depth)
        if firstMask & bit != 0 {
            firstMask &= ~bit
        } else {
            out.append(UInt8(ascii: ","))
        }
        if pretty { newline(into: &out) }
    }

    public mutating func beginObject(into out: inout [UInt8]) { open(UInt8(ascii: "{"), into: &out) }
    public mutating func endObject(into out: inout [UInt8]) { close(UInt8(ascii: "}"), into: &out) }
    public mutating func beginArray(into out: inout [UInt8]) { open(UInt8(ascii: "["), into: &out) }
    public mutating func endArray(into out: inout [UInt8]) { close(UInt8(ascii: "]"), into: &out) }

    /// Starts an array element (call before writing an element value).
    public mutating func element(into out: inout [UInt8]) { separator(into: &out) }

    /// Writes `"key":` (keys are static ASCII needing no escapes), optionally with a suffix such as `_ms`.
    public mutating func key(_ k: StaticString, suffix: StaticString = "", into out: inout [UInt8]) {
        separator(into: &out)
        out.append(UInt8(ascii: "\""))
        k.withUTF8Buffer { out.append(contentsOf: $0) }
        suffix.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
        if pretty { out.append(0x20) }
    }
}
