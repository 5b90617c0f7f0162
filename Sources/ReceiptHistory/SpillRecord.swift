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
    /// Reads the key and order of an encoded record without decoding it; nil when the type has no such reader (a
    /// partition's records are then all decoded to be merged and sorted).
    static var encodedKeys: SpillKeyReader? { get }
}

/// Reads, from a record's encoding (what `encode` wrote) where it lies: bytes that are equal for two records
/// exactly when their keys are (appended to `key`), a key that compares bytewise as `precedes` orders the records
/// (begun and appended in `order`); returns the hash whose remainder by a partition count is `partition`'s for
/// `seed`.
struct SpillKeyReader: Sendable {
    typealias Read =
        @Sendable (
            _ record: UnsafeRawBufferPointer, _ seed: UInt64, _ key: inout [UInt8], _ order: inout OrderKeys
        ) throws(HistoryError) -> UInt64
    let read: Read

    init(_ read: @escaping Read) { self.read = read }
}

extension SpillRecord {
    static var encodedKeys: SpillKeyReader? { nil }

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
