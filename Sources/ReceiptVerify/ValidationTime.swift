/// The time a receipt's certificates are judged valid at, passed to the verifier as a value.
///
/// Apple's procedure judges them at the receipt's creation date (attribute 12): a receipt whose certificates have
/// since expired stays valid. `instant` judges them at a given time instead (`inspect --at`), to show why that
/// would be wrong. A receipt without a creation date has no time under `receiptCreationDate`, and is rejected as
/// `malformed_attribute` rather than judged at some stand-in time.
public enum ValidationTime: Sendable, Equatable {
    /// The receipt's own creation date (attribute 12).
    case receiptCreationDate
    /// A fixed instant, epoch milliseconds.
    case instant(Int64)

    /// The epoch-millisecond time for a receipt created at `creationDate`; nil when there is none to judge at.
    @inline(__always) public func resolve(creationDate: Int64?) -> Int64? {
        switch self {
        case .receiptCreationDate: return creationDate
        case .instant(let ms): return ms
        }
    }

    /// How failure details name this time ("certificate X expired at ..., before the receipt creation date ...").
    public var name: String {
        switch self {
        case .receiptCreationDate: return "the receipt creation date"
        case .instant: return "the given validation time"
        }
    }
}
