import ReceiptJWS
import ReceiptModel

extension JWSFields {
    /// The decoded payload as a `JSONDocument`, for the NDJSON rows and `inspect`.
    public var jsonDocument: JSONDocument { Self.document(.object(object)) }

    /// A payload value as a document: integers stay exact, other numbers are doubles.
    static func document(_ value: PayloadValue) -> JSONDocument {
        switch value {
        case .string(let s): return .string(s)
        case .integer(let v): return .integer(v)
        case .double(let d): return .double(d)
        case .bool(let b): return .bool(b)
        case .null: return .null
        case .array(let a): return .array(a.map(document))
        case .object(let d):
            var o = JSONObject()
            for (k, v) in d { o[k] = document(v) }
            return .object(o)
        }
    }
}
