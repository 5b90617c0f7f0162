/// What one occurrence of a purchase says: its key (environment, bundle_id, transaction_id) and its facts, as
/// the receipt's in-app entry or the JWS transaction states them. Byte strings are spans of the occurrence's text.
///
/// The history's `purchases` row of a key takes these facts from the newest occurrence, except the cancellation
/// pair, which comes from the newest occurrence that has a cancellation date, and the customer's facts (user id,
/// app account token), each from the newest occurrence that has one. `visit` lists them in the
/// table's column order; it is the one list a new fact is added to (beside the stored property), and the
/// history's columns, spill encoding and row writing all follow from it.
///
/// Stored packed (112 bytes, where optional properties would take 176): each optional fact is a plain value with
/// a presence bit in `flags`, and an absent fact's value is 0, so that equal facts have equal storage
/// (`sameBeforeOverlay` compares the stored values). The properties read and write them as optionals.
public struct PurchaseFacts: Sendable {
    @usableFromInline var purchaseDateValue: Int64 = 0
    @usableFromInline var originalPurchaseDateValue: Int64 = 0
    @usableFromInline var expiresDateValue: Int64 = 0
    @usableFromInline var webOrderLineItemIDValue: Int64 = 0
    @usableFromInline var cancellationDateValue: Int64 = 0
    public var bundleID = TextSpan.empty
    public var transactionID = TextSpan.empty
    public var productID = TextSpan.empty
    @usableFromInline var originalTransactionIDValue = TextSpan.empty
    @usableFromInline var promotionalOfferIDValue = TextSpan.empty
    @usableFromInline var userIDValue = TextSpan.empty
    @usableFromInline var appAccountTokenValue = TextSpan.empty
    @usableFromInline var quantityValue: Int32 = 0
    @usableFromInline var productTypeValue: Int32 = 0
    @usableFromInline var cancellationReasonValue: Int32 = 0
    /// The environment, which optional facts are present, and the booleans' values (`Flag`).
    @usableFromInline var flags: UInt32 = 0

    /// The bits of `flags`.
    @usableFromInline enum Flag {
        @usableFromInline static let sandbox: UInt32 = 1 << 0
        @usableFromInline static let originalTransactionID: UInt32 = 1 << 1
        @usableFromInline static let quantity: UInt32 = 1 << 2
        @usableFromInline static let purchaseDate: UInt32 = 1 << 3
        @usableFromInline static let originalPurchaseDate: UInt32 = 1 << 4
        @usableFromInline static let expiresDate: UInt32 = 1 << 5
        @usableFromInline static let webOrderLineItemID: UInt32 = 1 << 6
        @usableFromInline static let isTrialPeriod: UInt32 = 1 << 7
        @usableFromInline static let isInIntroOfferPeriod: UInt32 = 1 << 8
        @usableFromInline static let promotionalOfferID: UInt32 = 1 << 9
        @usableFromInline static let productType: UInt32 = 1 << 10
        @usableFromInline static let cancellationDate: UInt32 = 1 << 11
        @usableFromInline static let cancellationReason: UInt32 = 1 << 12
        @usableFromInline static let userID: UInt32 = 1 << 13
        @usableFromInline static let multipleUserIDs: UInt32 = 1 << 14
        @usableFromInline static let appAccountToken: UInt32 = 1 << 15
        /// The values of the booleans (meaningful when present).
        @usableFromInline static let isTrialPeriodValue: UInt32 = 1 << 16
        @usableFromInline static let isInIntroOfferPeriodValue: UInt32 = 1 << 17
        @usableFromInline static let multipleUserIDsValue: UInt32 = 1 << 18
        /// The bits of the facts merged on their own (the cancellation pair, the customer's facts).
        @usableFromInline static let overlay: UInt32 =
            cancellationDate | cancellationReason | userID | multipleUserIDs | appAccountToken
            | multipleUserIDsValue
    }

    @inlinable func has(_ flag: UInt32) -> Bool { flags & flag != 0 }

    @inlinable mutating func mark(_ flag: UInt32, _ on: Bool) {
        flags = on ? flags | flag : flags & ~flag
    }

    @inlinable mutating func store(_ v: Bool?, _ flag: UInt32, _ valueFlag: UInt32) {
        mark(flag, v != nil)
        mark(valueFlag, v == true)
    }

    public var environment: HistoryEnvironment {
        @inlinable get { has(Flag.sandbox) ? .sandbox : .production }
        @inlinable set { mark(Flag.sandbox, newValue == .sandbox) }
    }

    public var originalTransactionID: TextSpan? {
        @inlinable get { has(Flag.originalTransactionID) ? originalTransactionIDValue : nil }
        @inlinable set {
            originalTransactionIDValue = newValue ?? .empty; mark(Flag.originalTransactionID, newValue != nil)
        }
    }

    public var quantity: Int32? {
        @inlinable get { has(Flag.quantity) ? quantityValue : nil }
        @inlinable set { quantityValue = newValue ?? 0; mark(Flag.quantity, newValue != nil) }
    }

    public var purchaseDate: Int64? {
        @inlinable get { has(Flag.purchaseDate) ? purchaseDateValue : nil }
        @inlinable set { purchaseDateValue = newValue ?? 0; mark(Flag.purchaseDate, newValue != nil) }
    }

    public var originalPurchaseDate: Int64? {
        @inlinable get { has(Flag.originalPurchaseDate) ? originalPurchaseDateValue : nil }
        @inlinable set { originalPurchaseDateValue = newValue ?? 0; mark(Flag.originalPurchaseDate, newValue != nil) }
    }

    public var expiresDate: Int64? {
        @inlinable get { has(Flag.expiresDate) ? expiresDateValue : nil }
        @inlinable set { expiresDateValue = newValue ?? 0; mark(Flag.expiresDate, newValue != nil) }
    }

    public var webOrderLineItemID: Int64? {
        @inlinable get { has(Flag.webOrderLineItemID) ? webOrderLineItemIDValue : nil }
        @inlinable set { webOrderLineItemIDValue = newValue ?? 0; mark(Flag.webOrderLineItemID, newValue != nil) }
    }

    public var isTrialPeriod: Bool? {
        @inlinable get { has(Flag.isTrialPeriod) ? has(Flag.isTrialPeriodValue) : nil }
        @inlinable set { store(newValue, Flag.isTrialPeriod, Flag.isTrialPeriodValue) }
    }

    public var isInIntroOfferPeriod: Bool? {
        @inlinable get { has(Flag.isInIntroOfferPeriod) ? has(Flag.isInIntroOfferPeriodValue) : nil }
        @inlinable set { store(newValue, Flag.isInIntroOfferPeriod, Flag.isInIntroOfferPeriodValue) }
    }

    public var promotionalOfferID: TextSpan? {
        @inlinable get { has(Flag.promotionalOfferID) ? promotionalOfferIDValue : nil }
        @inlinable set { promotionalOfferIDValue = newValue ?? .empty; mark(Flag.promotionalOfferID, newValue != nil) }
    }

    public var productType: Int32? {
        @inlinable get { has(Flag.productType) ? productTypeValue : nil }
        @inlinable set { productTypeValue = newValue ?? 0; mark(Flag.productType, newValue != nil) }
    }

    /// With the reason, the pair merged by the newest cancelled occurrence (a reason without a date is none).
    public var cancellationDate: Int64? {
        @inlinable get { has(Flag.cancellationDate) ? cancellationDateValue : nil }
        @inlinable set { cancellationDateValue = newValue ?? 0; mark(Flag.cancellationDate, newValue != nil) }
    }

    public var cancellationReason: Int32? {
        @inlinable get { has(Flag.cancellationReason) ? cancellationReasonValue : nil }
        @inlinable set { cancellationReasonValue = newValue ?? 0; mark(Flag.cancellationReason, newValue != nil) }
    }

    /// The record's `--user-field` value (nil when absent, or without the option).
    public var userID: TextSpan? {
        @inlinable get { has(Flag.userID) ? userIDValue : nil }
        @inlinable set { userIDValue = newValue ?? .empty; mark(Flag.userID, newValue != nil) }
    }

    /// False for an occurrence of a run with `--user-field`, nil without it; merged, whether the occurrences carry
    /// two or more distinct user ids.
    public var multipleUserIDs: Bool? {
        @inlinable get { has(Flag.multipleUserIDs) ? has(Flag.multipleUserIDsValue) : nil }
        @inlinable set { store(newValue, Flag.multipleUserIDs, Flag.multipleUserIDsValue) }
    }

    /// StoreKit 2's `appAccountToken` of a JWS transaction (receipts carry none).
    public var appAccountToken: TextSpan? {
        @inlinable get { has(Flag.appAccountToken) ? appAccountTokenValue : nil }
        @inlinable set { appAccountTokenValue = newValue ?? .empty; mark(Flag.appAccountToken, newValue != nil) }
    }

    @inlinable public init() {}

    /// Whether `other` holds the same values and spans in every fact but the ones merged on their own: the
    /// cancellation pair, the user id, `multiple_user_ids` and the app account token. Compares every other stored
    /// value (a test changes each visited fact in turn to check it).
    @inlinable
    public func sameBeforeOverlay(_ other: PurchaseFacts) -> Bool {
        (flags ^ other.flags) & ~Flag.overlay == 0
            && purchaseDateValue == other.purchaseDateValue
            && originalPurchaseDateValue == other.originalPurchaseDateValue
            && expiresDateValue == other.expiresDateValue
            && webOrderLineItemIDValue == other.webOrderLineItemIDValue
            && bundleID == other.bundleID && transactionID == other.transactionID && productID == other.productID
            && originalTransactionIDValue == other.originalTransactionIDValue
            && promotionalOfferIDValue == other.promotionalOfferIDValue
            && quantityValue == other.quantityValue && productTypeValue == other.productTypeValue
    }

    /// Every fact after the key, in the `purchases` column order, with its column name.
    @inlinable @inline(__always)
    public mutating func visit<V: PurchaseFactVisitor>(_ v: inout V) {
        v.text("bundle_id", &bundleID)
        v.text("transaction_id", &transactionID)
        v.text("original_transaction_id", &originalTransactionID)
        v.text("product_id", &productID)
        v.int32("quantity", &quantity)
        v.timestamp("purchase_date", &purchaseDate)
        v.timestamp("original_purchase_date", &originalPurchaseDate)
        v.timestamp("expires_date", &expiresDate)
        v.int64("web_order_line_item_id", &webOrderLineItemID)
        v.bool("is_trial_period", &isTrialPeriod)
        v.bool("is_in_intro_offer_period", &isInIntroOfferPeriod)
        v.text("promotional_offer_id", &promotionalOfferID)
        v.int32("product_type", &productType)
        v.timestamp("cancellation_date", &cancellationDate)
        v.int32("cancellation_reason", &cancellationReason)
        v.text("user_id", &userID)
        v.bool("multiple_user_ids", &multipleUserIDs)
        v.text("app_account_token", &appAccountToken)
    }
}
