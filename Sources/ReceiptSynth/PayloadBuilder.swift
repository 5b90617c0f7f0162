/// Encodes a receipt payload: `SET OF ReceiptAttribute { type INTEGER, version INTEGER, value OCTET STRING }`
/// (receipt-format.md §3), with the attributes in the order they were added: Apple writes them unsorted, so
/// this is deliberately not a DER-sorted SET.
///
/// ```swift
/// var b = PayloadBuilder()
/// b.utf8(0, "Production")
/// b.utf8(2, "com.example.app")
/// b.date(12, 1_600_000_000_000, style: .zulu)
/// var purchase = PayloadBuilder()
/// purchase.integer(1701, 1)
/// b.inApp(purchase)
/// let payload = b.encode()
/// ```
public struct PayloadBuilder: Sendable {
    /// The encoded `ReceiptAttribute` SEQUENCEs, in insertion order.
    public private(set) var attributes: [[UInt8]] = []

    public init() {}

    /// Adds an attribute whose OCTET STRING holds `value` as is (opaque bytes, or a pre-encoded TLV).
    public mutating func raw(_ type: Int, _ value: [UInt8], version: Int = 1) {
        attributes.append(
            DER.sequence([DER.integer(Int64(type)), DER.integer(Int64(version)), DER.octetString(value)]))
    }

    /// A UTF8String value (bundle id, versions, product ids, transaction ids).
    public mutating func utf8(_ type: Int, _ s: String, version: Int = 1) {
        raw(type, DER.utf8String(s), version: version)
    }

    /// An IA5String value.
    public mutating func ia5(_ type: Int, _ s: String, version: Int = 1) {
        raw(type, DER.ia5String(s), version: version)
    }

    /// An INTEGER value.
    public mutating func integer(_ type: Int, _ v: Int64, version: Int = 1) {
        raw(type, DER.integer(v), version: version)
    }

    /// A date as an IA5String in `style`; `nil` writes the empty string (how Apple writes an absent 1708/1712).
    public mutating func date(_ type: Int, _ ms: Int64?, style: ReceiptDateStyle = .zulu, version: Int = 1) {
        ia5(type, ms.map { style.format($0) } ?? "", version: version)
    }

    /// An in-app purchase (type 17) whose value is the SET encoded by `entry`.
    public mutating func inApp(_ entry: PayloadBuilder, version: Int = 1) { raw(17, entry.encode(), version: version) }

    /// The payload DER: a SET (tag 0x31) of the attributes in insertion order.
    public func encode() -> [UInt8] { DER.set(attributes) }

    /// The Xcode receipt expiration sentinel, `4001-01-01T00:00:00Z`, as epoch milliseconds.
    public static let xcodeExpirationSentinel: Int64 = TimeText.epochMillis(4001, 1, 1)
}
