/// Lays out JSON objects and arrays in a byte buffer: commas, colons, and with an indented layout newlines and two
/// spaces per level. Members come in the order they are written. The values themselves are `JSONText`'s.
///
/// Tracks "first member" per nesting level in a bit mask, so it does not allocate for the first 63 levels; deeper
/// levels (a decoded JWS payload is untrusted and may nest deeply) go on a stack of flags.
public struct JSONWriter {
    /// Where the whitespace goes.
    public enum Layout: Sendable {
        /// No whitespace: `{"a":1,"b":[2]}` (NDJSON lines, table rows, signed payloads).
        case compact
        /// One member per line, two spaces per level, `"a": 1` (`inspect --pretty`).
        case indented
        /// As `indented` with a space before the colon, `"a" : 1`: the layout of `summary.json`, `manifest.json`
        /// and `bench --json`, which scripts read with `grep`.
        case indentedSpacedColon
    }

    public let layout: Layout
    @usableFromInline var depth = 0
    @usableFromInline var firstMask: UInt64 = 0
    /// "No member yet" of the levels from 64 down.
    @usableFromInline var deepFirst: [Bool] = []

    // Inlinable: the verifyReceipt NDJSON writer (another module) calls these for every member of every record.
    @inlinable public init(layout: Layout) { self.layout = layout }

    /// A writer placed inside an object whose `{` (and perhaps some members) someone else writes: its first
    /// member gets no comma when `hasMembers` is false. Closing that object is up to the caller too.
    public static func continuingObject(layout: Layout = .compact, hasMembers: Bool) -> JSONWriter {
        var w = JSONWriter(layout: layout)
        w.depth = 1
        if !hasMembers { w.firstMask = 1 << 1 }
        return w
    }

    @usableFromInline var indented: Bool { layout != .compact }

    @inlinable mutating func open(_ c: UInt8, into out: inout [UInt8]) {
        out.append(c)
        depth += 1
        if depth < 64 { firstMask |= 1 << UInt64(depth) } else { deepFirst.append(true) }
    }

    @inlinable mutating func close(_ c: UInt8, into out: inout [UInt8]) {
        let empty: Bool
        if depth < 64 {
            empty = firstMask & (1 << UInt64(depth)) != 0
            firstMask &= ~(1 << UInt64(depth))
        } else {
            empty = deepFirst.removeLast()
        }
        depth -= 1
        if indented && !empty { newline(into: &out) }
        out.append(c)
    }

    @inlinable func newline(into out: inout [UInt8]) {
        out.append(0x0A)
        for _ in 0..<(depth * 2) { out.append(0x20) }
    }

    /// Starts the next member or element: a comma unless first, and the indentation.
    @inlinable mutating func separator(into out: inout [UInt8]) {
        let first: Bool
        if depth < 64 {
            let bit: UInt64 = 1 << UInt64(depth)
            first = firstMask & bit != 0
            firstMask &= ~bit
        } else {
            first = deepFirst[deepFirst.count - 1]
            deepFirst[deepFirst.count - 1] = false
        }
        if !first { out.append(UInt8(ascii: ",")) }
        if indented { newline(into: &out) }
    }

    @inlinable func colon(into out: inout [UInt8]) {
        switch layout {
        case .compact:
            out.append(UInt8(ascii: ":"))
        case .indented:
            out.append(UInt8(ascii: ":"))
            out.append(0x20)
        case .indentedSpacedColon:
            out.append(0x20)
            out.append(UInt8(ascii: ":"))
            out.append(0x20)
        }
    }

    @inlinable public mutating func beginObject(into out: inout [UInt8]) { open(UInt8(ascii: "{"), into: &out) }
    @inlinable public mutating func endObject(into out: inout [UInt8]) { close(UInt8(ascii: "}"), into: &out) }
    @inlinable public mutating func beginArray(into out: inout [UInt8]) { open(UInt8(ascii: "["), into: &out) }
    @inlinable public mutating func endArray(into out: inout [UInt8]) { close(UInt8(ascii: "]"), into: &out) }

    /// Starts an array element (call before writing an element value).
    @inlinable public mutating func element(into out: inout [UInt8]) { separator(into: &out) }

    /// Writes `"key":` for a static ASCII key that needs no escapes, optionally with a suffix such as `_ms`.
    @inlinable public mutating func key(_ k: StaticString, suffix: StaticString = "", into out: inout [UInt8]) {
        separator(into: &out)
        out.append(UInt8(ascii: "\""))
        k.withUTF8Buffer { out.append(contentsOf: $0) }
        suffix.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(UInt8(ascii: "\""))
        colon(into: &out)
    }

    /// Writes `"key":` for any key, escaped as a JSON string.
    @inlinable public mutating func key(_ k: String, into out: inout [UInt8]) {
        separator(into: &out)
        JSONText.appendString(k, into: &out)
        colon(into: &out)
    }
}
