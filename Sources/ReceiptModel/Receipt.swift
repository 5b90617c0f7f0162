/// One attribute as it appears in the receipt payload: `type`, `version` and the raw OCTET STRING contents.
public struct RawAttribute: Sendable, Equatable {
    public var type: Int
    public var version: Int
    public var value: [UInt8]
    public init(type: Int, version: Int, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value
    }
}

/// A decoded in-app purchase (attribute 17). Dates are epoch milliseconds; an empty date string is `nil`.
public struct InAppPurchase: Sendable, Equatable {
    public var quantity: Int64?
    public var productID: String?
    public var transactionID: String?
    public var purchaseDate: Int64?
    public var originalTransactionID: String?
    public var originalPurchaseDate: Int64?
    public var productType: Int64?
    public var expiresDate: Int64?
    public var webOrderLineItemID: Int64?
    public var cancellationDate: Int64?
    public var isTrialPeriod: Int64?
    public var isInIntroOfferPeriod: Int64?
    public var cancellationReason: Int64?
    public var promotionalOfferID: String?
    /// Every attribute of the entry, known or not, in receipt order.
    public var attributes: [RawAttribute] = []
    public init() {}
}

/// A decoded app receipt payload, materialized with Swift strings: for `inspect`, the NDJSON output and tests.
/// The export hot path does not build this; it reads `ReceiptDER.ReceiptFields` ranges directly.
public struct Receipt: Sendable, Equatable {
    public var receiptType: String?
    public var appItemID: Int64?
    public var bundleID: String?
    public var applicationVersion: String?
    public var opaqueValue: [UInt8]?
    public var sha1Hash: [UInt8]?
    public var receiptCreationDate: Int64?
    public var downloadID: Int64?
    public var versionExternalIdentifier: Int64?
    public var originalPurchaseDate: Int64?
    public var originalApplicationVersion: String?
    public var expirationDate: Int64?
    public var inApp: [InAppPurchase] = []
    /// Every top-level attribute, known or not, in receipt order (type-17 values included as raw bytes).
    public var attributes: [RawAttribute] = []
    public init() {}

    /// verifyReceipt's `environment` field: the name of `receipt_type`'s class (`RecordEnvironment`), nil when the
    /// receipt names none.
    public var environment: String? { RecordEnvironment(receiptType).name }
}

/// Attribute type numbers (receipt-format.md section 3).
public enum AttributeType {
    public static let receiptType = 0
    public static let appItemID = 1
    public static let bundleID = 2
    public static let applicationVersion = 3
    public static let opaqueValue = 4
    public static let sha1Hash = 5
    public static let receiptCreationDate = 12
    public static let downloadID = 15
    public static let versionExternalIdentifier = 16
    public static let inAppPurchase = 17
    public static let originalPurchaseDate = 18
    public static let originalApplicationVersion = 19
    public static let expirationDate = 21

    public static let quantity = 1701
    public static let productID = 1702
    public static let transactionID = 1703
    public static let purchaseDate = 1704
    public static let originalTransactionID = 1705
    public static let inAppOriginalPurchaseDate = 1706
    public static let productType = 1707
    public static let expiresDate = 1708
    public static let webOrderLineItemID = 1711
    public static let cancellationDate = 1712
    public static let isTrialPeriod = 1713
    public static let isInIntroOfferPeriod = 1719
    public static let cancellationReason = 1720
    public static let promotionalOfferID = 1721
}
