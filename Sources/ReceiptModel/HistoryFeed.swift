/// Where a byte string of an occurrence lies in its text: bytes `offset..<offset + count` of the text the value
/// is read with (an occurrence's text in its feed, or a purchase record's own).
public struct TextSpan: Sendable, Equatable {
    public var offset: Int32
    public var count: Int32

    @inlinable
    public init(offset: Int32, count: Int32) {
        self.offset = offset
        self.count = count
    }

    public static let empty = TextSpan(offset: 0, count: 0)
}

/// The environment of a record in the history tables, from its class (`RecordEnvironment`): `Sandbox` for a
/// sandbox record, otherwise `Production` (a record naming no environment included). The raw values order as the
/// names do, bytewise.
public enum HistoryEnvironment: UInt8, Sendable {
    case production = 0
    case sandbox = 1

    /// nil for StoreKit testing records (`Xcode`, `LocalTesting`), which never count.
    @inlinable
    public init?(_ environment: RecordEnvironment) {
        switch environment {
        case .sandbox: self = .sandbox
        case .production, .absent: self = .production
        case .xcode, .localTesting: return nil
        }
    }

    public var name: String { self == .production ? "Production" : "Sandbox" }
}

/// Visits the fields of `PurchaseFacts` (and of the history record built on them) by column name and type: a
/// schema builder, a spill encoder and decoder and a row writer are each one visitor.
public protocol PurchaseFactVisitor {
    mutating func text(_ name: StaticString, _ v: inout TextSpan)
    mutating func text(_ name: StaticString, _ v: inout TextSpan?)
    mutating func int32(_ name: StaticString, _ v: inout Int32?)
    mutating func int64(_ name: StaticString, _ v: inout Int64?)
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?)
    mutating func bool(_ name: StaticString, _ v: inout Bool?)
}

/// One purchase occurrence: an in-app entry of a valid receipt, or a valid JWS transaction, whose environment
/// contributes to the history.
public struct PurchaseOccurrence: Sendable {
    public var facts: PurchaseFacts
    /// Its text in the feed's `text` (the facts' spans are relative to its start).
    public var text: Range<Int>
    /// The receipt's creation date (a JWS's signed date).
    public var created: Int64?
    public var line: Int64
    /// The occurrence's place among the `transactions` rows of its line.
    public var entry: Int64
    /// `keyHash(environment:bundleID:transactionID:)` of its key, computed where the occurrence is made (a worker)
    /// so that the history stage only looks it up.
    public var keyHash: UInt64

    @usableFromInline
    init(facts: PurchaseFacts, text: Range<Int>, created: Int64?, line: Int64, entry: Int64, keyHash: UInt64) {
        self.facts = facts
        self.text = text
        self.created = created
        self.line = line
        self.entry = entry
        self.keyHash = keyHash
    }

    /// The hash of a purchase key (environment, bundle_id, transaction_id) that the history's in-memory table is
    /// indexed by. Seeded per process, like `Hasher`: equal within one run, never stored.
    @inlinable
    public static func keyHash(
        environment: UInt8, bundleID: UnsafeRawBufferPointer, transactionID: UnsafeRawBufferPointer
    ) -> UInt64 {
        keyHash(keyPrefix(environment: environment, bundleID: bundleID), transactionID: transactionID)
    }

    /// The hash state after a key's environment and bundle_id, which every purchase of a receipt shares:
    /// `keyHash(_:transactionID:)` finishes it for each.
    @inlinable
    public static func keyPrefix(environment: UInt8, bundleID: UnsafeRawBufferPointer) -> Hasher {
        var h = Hasher()
        h.combine(environment)
        h.combine(bytes: bundleID)
        h.combine(bundleID.count)
        return h
    }

    /// `keyHash(environment:bundleID:transactionID:)` from the key's `keyPrefix`.
    @inlinable
    public static func keyHash(_ prefix: Hasher, transactionID: UnsafeRawBufferPointer) -> UInt64 {
        var h = prefix
        h.combine(bytes: transactionID)
        return UInt64(UInt(bitPattern: h.finalize()))
    }
}

/// One counting renewal info: a valid JWS renewal info with an original_transaction_id, whose environment
/// contributes to the history.
public struct RenewalOccurrence: Sendable {
    public var environment: HistoryEnvironment
    /// Spans of the feed's `text`, absolute.
    public var originalTransactionID: TextSpan
    public var autoRenewProductID: TextSpan?
    public var signedDate: Int64?
    public var autoRenewStatus: Int32?
    public var expirationIntent: Int32?
    public var isInBillingRetryPeriod: Bool?
    public var gracePeriodExpiresDate: Int64?
    public var line: Int64
    public var jwsIndex: Int32

    public init(
        environment: HistoryEnvironment, originalTransactionID: TextSpan, autoRenewProductID: TextSpan?,
        signedDate: Int64?, autoRenewStatus: Int32?, expirationIntent: Int32?, isInBillingRetryPeriod: Bool?,
        gracePeriodExpiresDate: Int64?, line: Int64, jwsIndex: Int32
    ) {
        self.environment = environment
        self.originalTransactionID = originalTransactionID
        self.autoRenewProductID = autoRenewProductID
        self.signedDate = signedDate
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.line = line
        self.jwsIndex = jwsIndex
    }
}

/// What one batch gives the history stage, made by the row appenders beside the rows from the same values: the
/// purchase occurrences and counting renewal infos of its contributing records, in input order, and the latest
/// creation date among its contributing records (the data horizon, which records without purchases move too).
///
/// Byte strings live in one buffer, `text`, so that an occurrence allocates nothing of its own.
public struct HistoryFeed: Sendable {
    public var purchases: [PurchaseOccurrence] { purchaseList }
    public private(set) var renewals: [RenewalOccurrence] = []
    public var text: [UInt8] { textBytes }
    public private(set) var horizon: Int64? = nil
    /// False when the run has no history: the appenders then feed nothing.
    public let isCollecting: Bool
    // Internal storage that the per-occurrence methods, inlined into the appenders, write.
    @usableFromInline var purchaseList: [PurchaseOccurrence] = []
    @usableFromInline var textBytes: [UInt8] = []
    /// Where the current occurrence's text starts.
    @usableFromInline var start = 0

    public init(collecting: Bool = true) { isCollecting = collecting }

    public mutating func removeAll() {
        purchaseList.removeAll(keepingCapacity: true)
        renewals.removeAll(keepingCapacity: true)
        textBytes.removeAll(keepingCapacity: true)
        horizon = nil
        start = 0
    }

    /// Counts a contributing record created at `created` (a receipt's creation date, a JWS's signed date).
    public mutating func contributing(created: Int64?) {
        if let c = created { horizon = max(horizon ?? c, c) }
    }

    /// Starts the text of the next occurrence (spans made by `span` are relative to it).
    @inlinable
    public mutating func beginOccurrence() { start = textBytes.count }

    /// Appends `bytes` to the current occurrence's text; nil stays nil.
    @inlinable
    public mutating func span(_ bytes: UnsafeRawBufferPointer?) -> TextSpan? {
        guard let bytes else { return nil }
        let s = TextSpan(offset: Int32(textBytes.count - start), count: Int32(bytes.count))
        textBytes.append(contentsOf: bytes)
        return s
    }

    /// As `span(_:)` for a string.
    public mutating func span(_ s: String?) -> TextSpan? {
        guard var s else { return nil }
        return s.withUTF8 { span(UnsafeRawBufferPointer($0)) }
    }

    /// Adds the occurrence whose text was appended since `beginOccurrence`.
    @inlinable
    public mutating func addPurchase(_ facts: PurchaseFacts, created: Int64?, line: Int64, entry: Int64) {
        let start = self.start
        let prefix = textBytes.withUnsafeBytes { t in
            PurchaseOccurrence.keyPrefix(
                environment: facts.environment.rawValue, bundleID: t.bytes(facts.bundleID, from: start))
        }
        addPurchase(facts, keyPrefix: prefix, created: created, line: line, entry: entry)
    }

    /// As `addPurchase(_:created:line:entry:)`, given `PurchaseOccurrence.keyPrefix` of the facts' environment
    /// and bundle_id (made once for the purchases of a receipt, which share them).
    @inlinable
    public mutating func addPurchase(
        _ facts: PurchaseFacts, keyPrefix: Hasher, created: Int64?, line: Int64, entry: Int64
    ) {
        let start = self.start
        let hash = textBytes.withUnsafeBytes { t in
            PurchaseOccurrence.keyHash(keyPrefix, transactionID: t.bytes(facts.transactionID, from: start))
        }
        purchaseList.append(
            PurchaseOccurrence(
                facts: facts, text: start..<textBytes.count, created: created, line: line, entry: entry,
                keyHash: hash))
        self.start = textBytes.count
    }

    /// Adds a counting renewal info (its spans made by `span` after `beginOccurrence`, made absolute here).
    public mutating func addRenewal(_ r: RenewalOccurrence) {
        var r = r
        r.originalTransactionID.offset += Int32(start)
        r.autoRenewProductID?.offset += Int32(start)
        renewals.append(r)
        start = textBytes.count
    }

    /// The bytes of `span` in the text of `o`.
    public func bytes(_ span: TextSpan, of o: PurchaseOccurrence) -> ArraySlice<UInt8> {
        let at = o.text.lowerBound + Int(span.offset)
        return text[at..<(at + Int(span.count))]
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes of `s`, a span of the text that starts at `start` in this buffer.
    @inlinable
    func bytes(_ s: TextSpan, from start: Int) -> UnsafeRawBufferPointer {
        let at = start + Int(s.offset)
        return UnsafeRawBufferPointer(rebasing: self[at..<(at + Int(s.count))])
    }
}
