import Foundation

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

    static func of(_ payload: [String: Any]) -> JWSKind {
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
public struct JWSFields: @unchecked Sendable {
    /// The payload object as Foundation decoded it (values are String, NSNumber, arrays, dictionaries).
    public let object: [String: Any]

    public init(_ object: [String: Any]) { self.object = object }

    /// A string field; nil when absent or of another type.
    public func string(_ key: String) -> String? { object[key] as? String }

    /// An integer field (Apple writes dates as epoch milliseconds and ids as numbers or strings).
    public func int64(_ key: String) -> Int64? {
        switch object[key] {
        case let n as NSNumber where !Self.isBool(n):
            let d = n.doubleValue
            guard d.rounded() == d, abs(d) < 9.2e18 else { return nil }
            return n.int64Value
        case let s as String: return Int64(s)
        default: return nil
        }
    }

    /// A JSON number with a fraction, such as `price` in milli-units.
    public func double(_ key: String) -> Double? {
        guard let n = object[key] as? NSNumber, !Self.isBool(n) else { return nil }
        return n.doubleValue
    }

    /// A JSON boolean.
    public func bool(_ key: String) -> Bool? {
        guard let n = object[key] as? NSNumber, Self.isBool(n) else { return nil }
        return n.boolValue
    }

    /// A nested object (`data` of a notification).
    public func object(_ key: String) -> JWSFields? {
        (object[key] as? [String: Any]).map(JWSFields.init)
    }

    /// The payload's `signedDate` (epoch ms).
    public var signedDate: Int64? { int64("signedDate") }

    /// When Apple signed the payload (epoch ms), the time its certificates are judged at: `signedDate`, else, for
    /// an app transaction, `receiptCreationDate` (Apple's app transactions carry that date and no `signedDate`).
    public func signingDate(_ kind: JWSKind) -> Int64? {
        signedDate ?? (kind == .appTransaction ? int64("receiptCreationDate") : nil)
    }

    private static func isBool(_ n: NSNumber) -> Bool {
        // Foundation decodes JSON true/false as a boolean NSNumber; its type is CFBoolean's "c".
        String(cString: n.objCType) == "c"
    }
}
