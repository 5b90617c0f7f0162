/// A record the spill store can hold: merged by key in memory, written to and read from disk, and emitted in its
/// table's row order.
protocol SpillRecord: Sendable {
    associatedtype Key: Hashable & Sendable
    var storeKey: Key { get }
    mutating func merge(_ other: Self)
    var estimatedBytes: Int { get }
    func partition(_ count: Int, seed: UInt64) -> Int
    static func precedes(_ a: Self, _ b: Self) -> Bool
    /// Positions of `records` (distinct keys) in `precedes` order; see `SpillOrder.swift`.
    static func rowOrder(_ records: [Self]) -> [Int32]
    func encode(into w: inout SpillWriter)
    static func decode(_ r: inout SpillReader) throws(HistoryError) -> Self
    /// Decodes the next record over `record`, whose storage it may reuse (a merge reads each run's records into
    /// one value); on failure `record` holds some valid value.
    static func decode(_ r: inout SpillReader, into record: inout Self) throws(HistoryError)
    /// Whether each spilled record is framed with its order key (`SpillPrefixed`): the store then merges, sorts
    /// and splits its records in their encoded form, reading only that prefix; otherwise it decodes them all.
    static var hasOrderPrefix: Bool { get }
    /// Appends to `key` bytes that compare bytewise as `precedes` orders the records, and returns where the record's
    /// key lies in them (used when `hasOrderPrefix`).
    func spillOrderKey(into key: inout [UInt8]) -> SpillKeyBounds
}

extension SpillRecord {
    static var hasOrderPrefix: Bool { false }

    func spillOrderKey(into key: inout [UInt8]) -> SpillKeyBounds { SpillKeyBounds(headEnd: 0, tailStart: 0) }

    static func decode(_ r: inout SpillReader, into record: inout Self) throws(HistoryError) {
        record = try decode(&r)
    }
}

extension PurchaseRecord: SpillRecord {
    var storeKey: PurchaseKey { key }
}

extension RenewalRecord: SpillRecord {
    var storeKey: RenewalKey { key }
}
