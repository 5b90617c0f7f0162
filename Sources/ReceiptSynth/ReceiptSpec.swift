/// The intended contents of one synthetic receipt: its attributes in payload order, from which both the payload
/// bytes and the ground truth are derived (so the truth never comes from a decoder).
public struct ReceiptSpec: Sendable {
    /// One attribute value and how it is written.
    public enum Value: Sendable {
        case utf8(String)
        case ia5(String)
        case integer(Int64)
        /// OCTET STRING contents written as is.
        case raw([UInt8])
        /// A date in `style`, or the empty string when `nil`.
        case date(Int64?, ReceiptDateStyle)
        case inApp(ReceiptSpec)
    }

    /// One attribute to write: its type number, its version and its value.
    public struct Attribute: Sendable {
        public var type: Int
        public var version: Int
        public var value: Value
        public init(_ type: Int, _ value: Value, version: Int = 1) {
            self.type = type
            self.version = version
            self.value = value
        }
    }

    public var attributes: [Attribute] = []
    public init(attributes: [Attribute] = []) { self.attributes = attributes }

    public mutating func add(_ type: Int, _ value: Value, version: Int = 1) {
        attributes.append(Attribute(type, value, version: version))
    }

    /// The payload DER (`SET OF ReceiptAttribute`, in this order).
    public func payload() -> [UInt8] {
        var b = PayloadBuilder()
        for a in attributes {
            switch a.value {
            case .utf8(let s): b.utf8(a.type, s, version: a.version)
            case .ia5(let s): b.ia5(a.type, s, version: a.version)
            case .integer(let v): b.integer(a.type, v, version: a.version)
            case .raw(let bytes): b.raw(a.type, bytes, version: a.version)
            case .date(let ms, let style): b.date(a.type, ms, style: style, version: a.version)
            case .inApp(let entry): b.raw(a.type, entry.payload(), version: a.version)
            }
        }
        return b.encode()
    }

    // MARK: - What a decoder reads back

    /// The first attribute of `type`.
    func first(_ type: Int) -> Value? { attributes.first { $0.type == type }?.value }

    func string(_ type: Int) -> String? {
        switch first(type) {
        case .utf8(let s)?, .ia5(let s)?: return s
        default: return nil
        }
    }

    func integer(_ type: Int) -> Int64? {
        if case .integer(let v)? = first(type) { return v }
        return nil
    }

    /// Epoch milliseconds as a reader recovers them; nil when absent or empty.
    func date(_ type: Int) -> Int64? {
        if case .date(let ms?, let style)? = first(type) { return style.parsedValue(ms) }
        return nil
    }

    var inAppEntries: [ReceiptSpec] {
        attributes.compactMap { if case .inApp(let e) = $0.value { return e } else { return nil } }
    }
}
