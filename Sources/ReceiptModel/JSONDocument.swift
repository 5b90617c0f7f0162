/// A JSON document built as a value (summary.json, manifest.json, reports), rendered through `JSONWriter` and
/// `JSONText`. Objects keep their members in the order they are set; `rendered(sortingKeys: true)` orders them by
/// the UTF-8 bytes of their keys instead, at every level, so files diff cleanly between runs.
public enum JSONDocument: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// Finite values; a non-finite one is written as `null` (see `JSONText.appendDouble`).
    case double(Double)
    case string(String)
    case array([JSONDocument])
    case object(JSONObject)

    /// The JSON text of this value, with a newline after it when `trailingNewline`.
    public func rendered(
        layout: JSONWriter.Layout = .compact, sortingKeys: Bool = false, trailingNewline: Bool = false
    ) -> [UInt8] {
        var out: [UInt8] = []
        var w = JSONWriter(layout: layout)
        write(into: &out, writer: &w, sortingKeys: sortingKeys)
        if trailingNewline { out.append(0x0A) }
        return out
    }

    /// Appends this value at the writer's position (after a `key` or an `element`).
    public func write(into out: inout [UInt8], writer w: inout JSONWriter, sortingKeys: Bool) {
        switch self {
        case .null: JSONText.appendNull(into: &out)
        case .bool(let b): JSONText.appendBool(b, into: &out)
        case .integer(let i): JSONText.appendInteger(i, into: &out)
        case .double(let d): JSONText.appendDouble(d, into: &out)
        case .string(let s): JSONText.appendString(s, into: &out)
        case .array(let a):
            w.beginArray(into: &out)
            for v in a {
                w.element(into: &out)
                v.write(into: &out, writer: &w, sortingKeys: sortingKeys)
            }
            w.endArray(into: &out)
        case .object(let o):
            w.beginObject(into: &out)
            let members =
                sortingKeys ? o.members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } : o.members
            for m in members {
                w.key(m.key, into: &out)
                m.value.write(into: &out, writer: &w, sortingKeys: sortingKeys)
            }
            w.endObject(into: &out)
        }
    }
}

/// The members of a JSON object in insertion order; setting a key again replaces its value in place.
public struct JSONObject: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONDocument
    }

    public private(set) var members: [Member] = []

    public init() {}

    public init(_ members: KeyValuePairs<String, JSONDocument>) {
        for (k, v) in members { self[k] = v }
    }

    public subscript(key: String) -> JSONDocument? {
        get { members.first { $0.key == key }?.value }
        set {
            let i = members.firstIndex { $0.key == key }
            switch (i, newValue) {
            case (let i?, let v?): members[i].value = v
            case (let i?, nil): members.remove(at: i)
            case (nil, let v?): members.append(Member(key: key, value: v))
            case (nil, nil): break
            }
        }
    }
}

// MARK: - Literals

extension JSONDocument: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONDocument...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSONDocument)...) {
        var o = JSONObject()
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
}

extension JSONDocument {
    /// An integer (`Int` is 64 bits on every platform the tool builds for).
    public static func int(_ v: Int) -> JSONDocument { .integer(Int64(v)) }

    /// A string, or `null` when absent.
    public static func string(_ v: String?) -> JSONDocument { v.map { .string($0) } ?? .null }

    /// An array of strings.
    public static func strings(_ v: [String]) -> JSONDocument { .array(v.map { .string($0) }) }
}
