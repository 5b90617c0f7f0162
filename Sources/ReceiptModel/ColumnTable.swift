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

/// A nullable fixed-width column. Null rows hold a zero value so that `values.count == rowCount` always.
public struct PrimitiveColumn<T: Sendable & BinaryIntegerOrBool>: Sendable {
    public var values: [T] = []
    public var valid: [Bool] = []
    public init() {}

    @inlinable public mutating func append(_ v: T?) {
        if let v {
            values.append(v)
            valid.append(true)
        } else {
            values.append(T.zeroValue)
            valid.append(false)
        }
    }

    @inlinable public mutating func removeAll() {
        values.removeAll(keepingCapacity: true)
        valid.removeAll(keepingCapacity: true)
    }

    @inlinable public subscript(row: Int) -> T? { valid[row] ? values[row] : nil }
}

/// The value types a `PrimitiveColumn` can hold.
public protocol BinaryIntegerOrBool { static var zeroValue: Self { get } }
extension Int64: BinaryIntegerOrBool { public static var zeroValue: Int64 { 0 } }
extension Int32: BinaryIntegerOrBool { public static var zeroValue: Int32 { 0 } }
extension Bool: BinaryIntegerOrBool { public static var zeroValue: Bool { false } }

/// A nullable UTF-8 string column: all values back to back in `bytes`, row `i` at `offsets[i]..<offsets[i+1]`.
public struct StringColumn: Sendable {
    public var bytes: [UInt8] = []
    public var offsets: [Int32] = [0]
    public var valid: [Bool] = []
    public init() {}

    public var count: Int { valid.count }

    @inlinable public mutating func append(_ v: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: v)
        offsets.append(Int32(truncatingIfNeeded: bytes.count))
        valid.append(true)
    }

    public mutating func append(_ s: String?) {
        guard var s else { return appendNull() }
        s.withUTF8 { bytes.append(contentsOf: $0) }
        offsets.append(Int32(truncatingIfNeeded: bytes.count))
        valid.append(true)
    }

    public mutating func append(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
        offsets.append(Int32(truncatingIfNeeded: bytes.count))
        valid.append(true)
    }

    @inlinable public mutating func appendNull() {
        offsets.append(Int32(truncatingIfNeeded: bytes.count))
        valid.append(false)
    }

    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
        offsets.append(0)
        valid.removeAll(keepingCapacity: true)
    }

    /// The bytes of row `i` (empty for null rows).
    public func withBytes<R>(_ row: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = Int(offsets[row])
        let end = Int(offsets[row + 1])
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    public subscript(row: Int) -> String? {
        guard valid[row] else { return nil }
        return String(decoding: bytes[Int(offsets[row])..<Int(offsets[row + 1])], as: UTF8.self)
    }
}

/// Rows of one table in columnar form; sinks render pages and lines straight from these arrays.
public struct ColumnTable: Sendable {
    public let schema: TableSchema
    public var strings: [StringColumn]
    /// INT64 and TIMESTAMP(MILLIS) columns.
    public var int64s: [PrimitiveColumn<Int64>]
    public var int32s: [PrimitiveColumn<Int32>]
    public var bools: [PrimitiveColumn<Bool>]
    public var rowCount: Int = 0

    public init(schema: TableSchema) {
        self.schema = schema
        let c = schema.kindCounts
        strings = Array(repeating: StringColumn(), count: c[0])
        int64s = Array(repeating: PrimitiveColumn(), count: c[1])
        int32s = Array(repeating: PrimitiveColumn(), count: c[2])
        bools = Array(repeating: PrimitiveColumn(), count: c[3])
    }

    public mutating func removeAll() {
        for i in strings.indices { strings[i].removeAll() }
        for i in int64s.indices { int64s[i].removeAll() }
        for i in int32s.indices { int32s[i].removeAll() }
        for i in bools.indices { bools[i].removeAll() }
        rowCount = 0
    }

    /// Debug check that every column holds `rowCount` rows.
    public var isConsistent: Bool {
        strings.allSatisfy { $0.count == rowCount && $0.offsets.count == rowCount + 1 }
            && int64s.allSatisfy { $0.values.count == rowCount && $0.valid.count == rowCount }
            && int32s.allSatisfy { $0.values.count == rowCount && $0.valid.count == rowCount }
            && bools.allSatisfy { $0.values.count == rowCount && $0.valid.count == rowCount }
    }
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
    public static let verified = 0
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

/// The output of one worker for one input batch: both tables, in input order, plus the verifyReceipt-shaped
/// NDJSON lines when that format was asked for.
public struct ColumnBatch: Sendable {
    /// Position of the input batch this came from; the writer emits batches in this order.
    public var sequence: Int
    public var receipts: ColumnTable
    public var transactions: ColumnTable
    /// When `--format ndjson`: one rendered JSON object per receipts row, each followed by `\n`.
    public var ndjson: [UInt8] = []
    /// Input bytes this batch covered (for progress and the summary).
    public var inputBytes: Int = 0

    public init(sequence: Int) {
        self.sequence = sequence
        receipts = ColumnTable(schema: .receipts)
        transactions = ColumnTable(schema: .transactions)
    }
}
