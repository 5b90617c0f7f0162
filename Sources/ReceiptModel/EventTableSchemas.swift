extension TableSchema {
    /// `events`: one row per event of each auto-renewable subscription (docs/history.md, "Subscription events").
    public static let events = TableSchema(
        name: "events",
        [
            ("environment", .string, false),
            ("bundle_id", .string, false),
            ("original_transaction_id", .string, false),
            ("event_date", .timestampMillis, false),
            ("event", .string, false),
            ("transaction_id", .string, false),
            ("product_id", .string, true),
            ("previous_product_id", .string, true),
            ("offer", .string, true),
            ("period", .int64, false),
            ("cancellation_reason", .int32, true),
        ])

    /// `daily`: per UTC day and (environment, bundle_id, product_id), the subscriptions by state at the day's end
    /// and the day's events (docs/history.md, "Daily activity").
    public static let daily = TableSchema(
        name: "daily",
        [
            ("day", .date, false),
            ("environment", .string, false),
            ("bundle_id", .string, false),
            ("product_id", .string, true),
            ("active", .int64, false),
            ("active_trial", .int64, false),
            ("active_intro", .int64, false),
            ("grace_period", .int64, false),
            ("billing_retry", .int64, false),
            ("unknown", .int64, false),
            ("starts", .int64, false),
            ("reactivations", .int64, false),
            ("conversions", .int64, false),
            ("renewals", .int64, false),
            ("product_changes", .int64, false),
            ("refunds", .int64, false),
            ("expirations", .int64, false),
        ])
}

/// Column slots of the `events` table.
public enum EventsColumns {
    // strings
    public static let environment = 0, bundleID = 1, originalTransactionID = 2, event = 3, transactionID = 4,
        productID = 5, previousProductID = 6, offer = 7
    // int64s (timestamps included)
    public static let eventDate = 0, period = 1
    // int32s
    public static let cancellationReason = 0
}

/// Column slots of the `daily` table: the thirteen counts are the int64 slots 0...12 in column order.
public enum DailyColumns {
    // strings
    public static let environment = 0, bundleID = 1, productID = 2
    // int32s (the date)
    public static let day = 0
}
