/// Turns an `Encodable` value into a `JSONDocument`, so `Codable` types (the part manifest) are written by the same
/// writer as everything else while `JSONDecoder` keeps reading them. Follows `JSONEncoder`'s defaults: keys as the
/// coding keys say, absent optionals left out, `nil` encoded explicitly as `null`, a key set twice keeps the last
/// value. A `UInt64` above `Int64.max` throws `EncodingError.invalidValue`.
public enum JSONDocumentEncoder {
    public static func encode<T: Encodable>(_ value: T) throws -> JSONDocument {
        let root = Node()
        try value.encode(to: NodeEncoder(node: root, codingPath: []))
        return root.json
    }
}

/// A value being built; containers hold their children by reference, as `Encoder` containers outlive calls.
private final class Node {
    enum Kind {
        case unset
        case value(JSONDocument)
        case object([(key: String, node: Node)])
        case array([Node])
    }

    var kind = Kind.unset

    var json: JSONDocument {
        switch kind {
        case .unset: return .object(JSONObject())
        case .value(let v): return v
        case .array(let a): return .array(a.map(\.json))
        case .object(let members):
            var o = JSONObject()
            for m in members { o[m.key] = m.node.json }
            return .object(o)
        }
    }

    /// The child under `key`, created (or replaced, as a key set twice keeps the last value) for writing.
    func child(_ key: String) -> Node {
        let n = Node()
        guard case .object(var members) = kind else {
            kind = .object([(key, n)])
            return n
        }
        kind = .unset  // keeps `members` uniquely referenced while it changes
        if let i = members.firstIndex(where: { $0.key == key }) {
            members[i].node = n
        } else {
            members.append((key, n))
        }
        kind = .object(members)
        return n
    }

    func appendChild() -> Node {
        let n = Node()
        guard case .array(var a) = kind else {
            kind = .array([n])
            return n
        }
        kind = .unset
        a.append(n)
        kind = .array(a)
        return n
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String { "Index \(intValue!)" }
    var intValue: Int?
    init(_ i: Int) { intValue = i }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) {}
    init?(intValue: Int) { nil }
}

private struct NodeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.kind {} else { node.kind = .object([]) }
        return KeyedEncodingContainer(KeyedNode<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.kind {} else { node.kind = .array([]) }
        return UnkeyedNode(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleNode(node: node, codingPath: codingPath) }
}

/// Scalars as `JSONDocument`s; anything else through its own `encode(to:)` into `node`.
private func store<T: Encodable>(_ value: T, in node: Node, codingPath: [any CodingKey]) throws {
    switch value {
    case let v as Bool: node.kind = .value(.bool(v))
    case let v as String: node.kind = .value(.string(v))
    case let v as Double: node.kind = .value(.double(v))
    case let v as Float: node.kind = .value(.double(Double(v)))
    case let v as any FixedWidthInteger:
        guard let i = Int64(exactly: v) else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "\(v) does not fit a 64-bit signed integer"))
        }
        node.kind = .value(.integer(i))
    default: try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
    }
}

private struct KeyedNode<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(key.stringValue).kind = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try store(value, in: node.child(key.stringValue), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.child("super"), codingPath: codingPath + [SuperKey()])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedNode: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    var count: Int {
        if case .array(let a) = node.kind { return a.count }
        return 0
    }

    private var nextPath: [any CodingKey] { codingPath + [IndexKey(count)] }

    mutating func encodeNil() throws { node.appendChild().kind = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = nextPath
        try store(value, in: node.appendChild(), codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        return NodeEncoder(node: node.appendChild(), codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        return NodeEncoder(node: node.appendChild(), codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        return NodeEncoder(node: node.appendChild(), codingPath: path)
    }
}

private struct SingleNode: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.kind = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws { try store(value, in: node, codingPath: codingPath) }
}
