import ReceiptModel

/// One in-app purchase as located by the parser: strings as ranges into the payload, numbers and dates decoded.
/// Dates are epoch milliseconds; `nil` when the attribute is absent or its string is empty.
public struct InAppFields: Sendable {
    public var quantity: Int64? = nil
    public var productID: Range<Int>? = nil
    public var transactionID: Range<Int>? = nil
    public var purchaseDate: Int64? = nil
    public var originalTransactionID: Range<Int>? = nil
    public var originalPurchaseDate: Int64? = nil
    public var productType: Int64? = nil
    public var expiresDate: Int64? = nil
    public var webOrderLineItemID: Int64? = nil
    public var cancellationDate: Int64? = nil
    public var isTrialPeriod: Int64? = nil
    public var isInIntroOfferPeriod: Int64? = nil
    public var cancellationReason: Int64? = nil
    public var promotionalOfferID: Range<Int>? = nil
    public init() {}
}

/// The app-level fields of one receipt payload as located by the parser. String ranges index the payload
/// (`ReceiptParser.withContent`). Each `parse` starts from a fresh value (only the in-app array's storage is
/// reused): copy what you need before the next `parse`.
public struct ReceiptFields: Sendable {
    public var receiptType: Range<Int>? = nil
    public var appItemID: Int64? = nil
    public var bundleID: Range<Int>? = nil
    public var applicationVersion: Range<Int>? = nil
    public var originalApplicationVersion: Range<Int>? = nil
    public var downloadID: Int64? = nil
    public var versionExternalIdentifier: Int64? = nil
    public var receiptCreationDate: Int64? = nil
    public var originalPurchaseDate: Int64? = nil
    public var expirationDate: Int64? = nil
    /// Attribute 4's value bytes (the opaque value), as they stand in the attribute's OCTET STRING.
    public var opaqueValue: Range<Int>? = nil
    /// Attribute 5's value bytes (the SHA-1 of device identifier, opaque value and bundle id).
    public var sha1Hash: Range<Int>? = nil
    /// Attribute 2's whole value (the bundle id's UTF8String with its tag and length), the bytes the SHA-1 covers.
    public var bundleIDDER: Range<Int>? = nil
    /// In receipt order; `inAppCount` entries (the array holds exactly those).
    public var inApp: [InAppFields] = []
    public var inAppCount: Int = 0
    public init() {}
}
