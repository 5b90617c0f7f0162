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
}

extension PurchaseRecord: SpillRecord {
    var storeKey: PurchaseKey { key }
}

extension RenewalRecord: SpillRecord {
    var storeKey: RenewalKey { key }
}
