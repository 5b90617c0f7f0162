import Foundation
import ReceiptJWS
import ReceiptModel

extension JWSFields {
    /// The decoded payload as a `JSONDocument`, for the NDJSON rows and `inspect`.
    public var jsonDocument: JSONDocument { Self.document(object) }

    /// A value `JSONSerialization` parsed (strings, `NSNumber`s, arrays, dictionaries, `NSNull`). Booleans are the
    /// `NSNumber`s of type `c`; integers stay exact, and only numbers read as floating point become doubles.
    static func document(_ any: Any) -> JSONDocument {
        switch any {
        case let s as String: return .string(s)
        case let n as NSNumber:
            switch String(cString: n.objCType) {
            case "c": return .bool(n.boolValue)
            case "d", "f": return .double(n.doubleValue)
            case "Q" where n.uint64Value > UInt64(Int64.max): return .double(n.doubleValue)
            default: return .integer(n.int64Value)
            }
        case let a as [Any]: return .array(a.map(document))
        case let d as [String: Any]:
            var o = JSONObject()
            for (k, v) in d { o[k] = document(v) }
            return .object(o)
        default: return .null
        }
    }
}
