/// The row order of records held in memory, as positions: sorting the positions moves 4 bytes per step where
/// sorting the records would move (and retain and release) a whole record, a few hundred bytes for a purchase.
/// Keys are distinct, so the order is total and does not depend on where the records started.
func rowOrder<R: SpillRecord>(_ records: [R]) -> [Int32] {
    var order = (0..<Int32(records.count)).map { $0 }
    records.withUnsafeBufferPointer { p in
        order.sort { R.precedes(p[Int($0)], p[Int($1)]) }
    }
    return order
}
