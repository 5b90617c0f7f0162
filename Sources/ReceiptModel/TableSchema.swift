/// The physical kind of a table column. Timestamps are epoch milliseconds, UTC.
public enum ColumnKind: Sendable, Equatable {
    case string
    case int64
    case int32
    case bool
    case timestampMillis
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
        case .int32: return 2
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
        ])
}

/// Column slots of the `receipts` table, for writers that fill it by name without lookups.
public enum ReceiptsColumns {
    // strings
    public static let source = 0, recordID = 1, errorCode = 2, errorDetail = 3, receiptType = 4, bundleID = 5,
        applicationVersion = 6, originalApplicationVersion = 7, digestAlgorithm = 8, signerSHA256 = 9,
        receiptSHA256 = 10
    // int64s (timestamps included)
    public static let line = 0, appItemID = 1, downloadID = 2, versionExternalIdentifier = 3,
        receiptCreationDate = 4, originalPurchaseDate = 5, expirationDate = 6
    // int32s
    public static let status = 0, inAppCount = 1
    // bools
    public static let verified = 0, deviceHashMatches = 1
}

/// Column slots of the `transactions` table.
public enum TransactionsColumns {
    // strings
    public static let source = 0, recordID = 1, bundleID = 2, receiptType = 3, productID = 4, transactionID = 5,
        originalTransactionID = 6, promotionalOfferID = 7
    // int64s (timestamps included)
    public static let line = 0, purchaseDate = 1, originalPurchaseDate = 2, expiresDate = 3, cancellationDate = 4,
        webOrderLineItemID = 5
    // int32s
    public static let quantity = 0, productType = 1, cancellationReason = 2
    // bools
    public static let isTrialPeriod = 0, isInIntroOfferPeriod = 1
}
