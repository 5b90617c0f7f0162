/// What an Apple JWS payload describes, told by the keys it holds.
public enum JWSKind: String, Sendable, Equatable {
    /// `JWSTransactionDecodedPayload` (`signedTransactionInfo`, pages of `signedTransactions`).
    case transaction
    /// `JWSRenewalInfoDecodedPayload` (`signedRenewalInfo`).
    case renewal
    /// An App Store Server Notification V2 (`signedPayload`).
    case notification
    /// `AppTransaction` (StoreKit 2's app-level receipt).
    case appTransaction = "app_transaction"
    /// A signed JSON object of none of the kinds above.
    case other

    static func of(_ payload: [String: PayloadValue]) -> JWSKind {
        if payload["notificationType"] != nil { return .notification }
        if payload["transactionId"] != nil { return .transaction }
        if payload["autoRenewStatus"] != nil || payload["autoRenewProductId"] != nil { return .renewal }
        if payload["appTransactionId"] != nil || payload["originalApplicationVersion"] != nil {
            return .appTransaction
        }
        return .other
    }
}

/// The fields of a decoded payload, read by name with the JSON types Apple uses.
public struct JWSFields: Sendable {
    /// The payload object as `PayloadJSON` read it.
    public let object: [String: PayloadValue]

    public init(_ object: [String: PayloadValue]) { self.object = object }

    /// A string field; nil when absent or of another type.
    public func string(_ key: String) -> String? {
        guard case .string(let s)? = object[key] else { return nil }
        return s
    }

    /// An integer field (Apple writes dates as epoch milliseconds and ids as numbers or strings): an integer, a
    /// number with an integral value below 9.2e18 in magnitude, or a string holding a decimal integer.
    public func int64(_ key: String) -> Int64? {
        switch object[key] {
        case .integer(let v)?: return abs(Double(v)) < 9.2e18 ? v : nil
        case .double(let d)?:
            guard d.rounded() == d, abs(d) < 9.2e18 else { return nil }
            return Int64(d)
        case .string(let s)?: return Int64(s)
        default: return nil
        }
    }

    /// A JSON number with a fraction, such as `price` in milli-units.
    public func double(_ key: String) -> Double? {
        switch object[key] {
        case .integer(let v)?: return Double(v)
        case .double(let d)?: return d
        default: return nil
        }
    }

    /// A JSON boolean.
    public func bool(_ key: String) -> Bool? {
        guard case .bool(let b)? = object[key] else { return nil }
        return b
    }

    /// A nested object (`data` of a notification).
    public func object(_ key: String) -> JWSFields? {
        guard case .object(let o)? = object[key] else { return nil }
        return JWSFields(o)
    }

    /// The payload's `signedDate` (epoch ms).
    public var signedDate: Int64? { int64("signedDate") }

    /// When Apple signed the payload (epoch ms), the time its certificates are judged at: `signedDate`, else, for
    /// an app transaction, `receiptCreationDate` (Apple's app transactions carry that date and no `signedDate`).
    public func signingDate(_ kind: JWSKind) -> Int64? {
        signedDate ?? (kind == .appTransaction ? int64("receiptCreationDate") : nil)
    }
}
