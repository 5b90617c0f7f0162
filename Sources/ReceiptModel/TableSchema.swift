/// The physical kind of a table column. Timestamps are epoch milliseconds, UTC.
public enum ColumnKind: Sendable, Equatable {
    case string
    case int64
    case int32
    case bool
    case timestampMillis
    /// A UTC calendar day, as days since 1970-01-01 (stored with the int32 columns).
    case date
}

/// One column of a table schema: its contract name, kind, nullability and where its values live in a
/// `ColumnTable` (`slot` indexes the typed array for its kind: `strings`, `int64s` (timestamps too), `int32s`, `bools`).
public struct ColumnSpec: Sendable, Equatable {
    public let name: String
    public let kind: ColumnKind
    public let nullable: Bool
    public let slot: Int
}

/// The ordered columns of one output table (contract.md, "Output files").
public struct TableSchema: Sendable, Equatable {
    public let name: String
    public let columns: [ColumnSpec]

    /// Builds a schema from (name, kind, nullable) triples, assigning slots per kind in order.
    public init(name: String, _ defs: [(String, ColumnKind, Bool)]) {
        self.name = name
        var counts = [0, 0, 0, 0]
        var cols: [ColumnSpec] = []
        for (n, k, nullable) in defs {
            let bucket = TableSchema.bucket(k)
            cols.append(ColumnSpec(name: n, kind: k, nullable: nullable, slot: counts[bucket]))
            counts[bucket] += 1
        }
        self.columns = cols
    }

    static func bucket(_ k: ColumnKind) -> Int {
        switch k {
        case .string: return 0
        case .int64, .timestampMillis: return 1
        case .int32, .date: return 2
        case .bool: return 3
        }
    }

    var kindCounts: [Int] {
        var c = [0, 0, 0, 0]
        for col in columns { c[TableSchema.bucket(col.kind)] += 1 }
        return c
    }

    public func column(named n: String) -> ColumnSpec? { columns.first { $0.name == n } }

    /// `receipts`: exactly one row per input record.
    public static let receipts = TableSchema(
        name: "receipts",
        [
            ("source", .string, false),
            ("line", .int64, false),
            ("record_id", .string, true),
            ("status", .int32, false),
            ("error_code", .string, true),
            ("error_detail", .string, true),
            ("verified", .bool, false),
            ("receipt_type", .string, true),
            ("bundle_id", .string, true),
            ("application_version", .string, true),
            ("original_application_version", .string, true),
            ("app_item_id", .int64, true),
            ("download_id", .int64, true),
            ("version_external_identifier", .int64, true),
            ("receipt_creation_date", .timestampMillis, true),
            ("original_purchase_date", .timestampMillis, true),
            ("expiration_date", .timestampMillis, true),
            ("in_app_count", .int32, true),
            ("digest_algorithm", .string, true),
            ("signer_sha256", .string, true),
            ("receipt_sha256", .string, true),
            ("device_hash_matches", .bool, true),
            ("record_kind", .string, false),
            ("jws_index", .int32, true),
        ])

    /// `transactions`: one row per in-app purchase of every receipt with status 0.
    public static let transactions = TableSchema(
        name: "transactions",
        [
            ("source", .string, false),
            ("line", .int64, false),
            ("record_id", .string, true),
            ("bundle_id", .string, false),
            ("receipt_type", .string, false),
            ("quantity", .int32, true),
            ("product_id", .string, false),
            ("transaction_id", .string, false),
            ("original_transaction_id", .string, true),
            ("purchase_date", .timestampMillis, true),
            ("original_purchase_date", .timestampMillis, true),
            ("expires_date", .timestampMillis, true),
            ("cancellation_date", .timestampMillis, true),
            ("web_order_line_item_id", .int64, true),
            ("is_trial_period", .bool, true),
            ("is_in_intro_offer_period", .bool, true),
            ("promotional_offer_id", .string, true),
            ("product_type", .int32, true),
            ("cancellation_reason", .int32, true),
            ("type", .string, true),
            ("in_app_ownership_type", .string, true),
            ("revocation_date", .timestampMillis, true),
            ("revocation_reason", .int32, true),
            ("is_upgraded", .bool, true),
            ("offer_type", .int32, true),
            ("offer_identifier", .string, true),
            ("storefront", .string, true),
            ("transaction_reason", .string, true),
            ("price", .int64, true),
            ("currency", .string, true),
            ("app_account_token", .string, true),
            ("subscription_group_identifier", .string, true),
            ("signed_date", .timestampMillis, true),
            ("environment", .string, true),
            ("jws_index", .int32, true),
        ])

    /// `renewals`: one row per verified JWS renewal info (docs/jws.md).
    public static let renewals = TableSchema(
        name: "renewals",
        [
            ("source", .string, false),
            ("line", .int64, false),
            ("record_id", .string, true),
            ("jws_index", .int32, false),
            ("environment", .string, true),
            ("original_transaction_id", .string, true),
            ("product_id", .string, true),
            ("auto_renew_product_id", .string, true),
            ("auto_renew_status", .int32, true),
            ("expiration_intent", .int32, true),
            ("is_in_billing_retry_period", .bool, true),
            ("grace_period_expires_date", .timestampMillis, true),
            ("price_increase_status", .int32, true),
            ("offer_type", .int32, true),
            ("offer_identifier", .string, true),
            ("recent_subscription_start_date", .timestampMillis, true),
            ("renewal_date", .timestampMillis, true),
            ("renewal_price", .int64, true),
            ("currency", .string, true),
            ("signed_date", .timestampMillis, true),
        ])
}

extension TableSchema {
    /// `subscriptions`: one row per (environment, bundle_id, original_transaction_id) of auto-renewable periods,
    /// then the columns of the subscription's newest JWS renewal info (null without one) (docs/history.md).
    public static let subscriptions = TableSchema(
        name: "subscriptions",
        [
            ("environment", .string, false),
            ("bundle_id", .string, false),
            ("original_transaction_id", .string, false),
            ("first_product_id", .string, false),
            ("latest_product_id", .string, false),
            ("first_purchase_date", .timestampMillis, true),
            ("latest_purchase_date", .timestampMillis, true),
            ("latest_expires_date", .timestampMillis, true),
            ("periods", .int64, false),
            ("trial_periods", .int64, false),
            ("intro_periods", .int64, false),
            ("cancelled_periods", .int64, false),
            ("observed_through", .timestampMillis, true),
            ("state", .string, false),
            ("renewal_signed_date", .timestampMillis, true),
            ("auto_renew_status", .int32, true),
            ("auto_renew_product_id", .string, true),
            ("expiration_intent", .int32, true),
            ("is_in_billing_retry_period", .bool, true),
            ("grace_period_expires_date", .timestampMillis, true),
        ])
}

/// Column slots of the `subscriptions` table.
public enum SubscriptionsColumns {
    // strings
    public static let environment = 0, bundleID = 1, originalTransactionID = 2, firstProductID = 3,
        latestProductID = 4, state = 5
    // int64s (timestamps included)
    public static let firstPurchaseDate = 0, latestPurchaseDate = 1, latestExpiresDate = 2, periods = 3,
        trialPeriods = 4, introPeriods = 5, cancelledPeriods = 6, observedThrough = 7
    // The newest renewal info's columns: a string, two timestamps, two int32s and a bool.
    public static let autoRenewProductID = 6
    public static let renewalSignedDate = 8, gracePeriodExpiresDate = 9
    public static let autoRenewStatus = 0, expirationIntent = 1
    public static let isInBillingRetryPeriod = 0
}

/// Column slots of the `receipts` table, for writers that fill it by name without lookups.
public enum ReceiptsColumns {
    // strings
    public static let source = 0, recordID = 1, errorCode = 2, errorDetail = 3, receiptType = 4, bundleID = 5,
        applicationVersion = 6, originalApplicationVersion = 7, digestAlgorithm = 8, signerSHA256 = 9,
        receiptSHA256 = 10, recordKind = 11
    // int64s (timestamps included)
    public static let line = 0, appItemID = 1, downloadID = 2, versionExternalIdentifier = 3,
        receiptCreationDate = 4, originalPurchaseDate = 5, expirationDate = 6
    // int32s
    public static let status = 0, inAppCount = 1, jwsIndex = 2
    // bools
    public static let verified = 0, deviceHashMatches = 1
}

/// Column slots of the `transactions` table.
public enum TransactionsColumns {
    // strings
    public static let source = 0, recordID = 1, bundleID = 2, receiptType = 3, productID = 4, transactionID = 5,
        originalTransactionID = 6, promotionalOfferID = 7, type = 8, inAppOwnershipType = 9, offerIdentifier = 10,
        storefront = 11, transactionReason = 12, currency = 13, appAccountToken = 14,
        subscriptionGroupIdentifier = 15, environment = 16
    // int64s (timestamps included)
    public static let line = 0, purchaseDate = 1, originalPurchaseDate = 2, expiresDate = 3, cancellationDate = 4,
        webOrderLineItemID = 5, revocationDate = 6, price = 7, signedDate = 8
    // int32s
    public static let quantity = 0, productType = 1, cancellationReason = 2, revocationReason = 3, offerType = 4,
        jwsIndex = 5
    // bools
    public static let isTrialPeriod = 0, isInIntroOfferPeriod = 1, isUpgraded = 2

    /// The slots of the columns only a JWS transaction fills, by kind (bool: `isUpgraded` alone).
    public static let jwsOnlyStrings = [
        type, inAppOwnershipType, offerIdentifier, storefront, transactionReason, currency, appAccountToken,
        subscriptionGroupIdentifier, environment,
    ]
    public static let jwsOnlyInt64s = [revocationDate, price, signedDate]
    public static let jwsOnlyInt32s = [revocationReason, offerType, jwsIndex]
}

/// Column slots of the `renewals` table.
public enum RenewalsColumns {
    // strings
    public static let source = 0, recordID = 1, environment = 2, originalTransactionID = 3, productID = 4,
        autoRenewProductID = 5, offerIdentifier = 6, currency = 7
    // int64s (timestamps included)
    public static let line = 0, gracePeriodExpiresDate = 1, recentSubscriptionStartDate = 2, renewalDate = 3,
        renewalPrice = 4, signedDate = 5
    // int32s
    public static let jwsIndex = 0, autoRenewStatus = 1, expirationIntent = 2, priceIncreaseStatus = 3, offerType = 4
    // bools
    public static let isInBillingRetryPeriod = 0
}
