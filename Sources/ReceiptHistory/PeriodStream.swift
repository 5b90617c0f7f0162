/// Puts the periods of the subscriptions pass in their row order (`PeriodRecord.precedes`) as they come out of
/// the purchases' merge, without sorting what is already in order.
///
/// The purchases come in their row order: environment, bundle_id, original_transaction_id (null first),
/// purchase_date, transaction_id. For a period with an original_transaction_id that is already the periods' order;
/// only periods without one (keyed by their own transaction_id) are out of place, and they all come first within
/// their (environment, bundle_id). They are held, sorted when the first period with an original_transaction_id
/// arrives, and merged in from there. When those held periods exceed the budget, every period from then on goes
/// through `store` (merged by key, spilled if needed) and comes out of `finish`, all after those given so far.
struct PeriodStream {
    let store: SpillStore<PeriodRecord>
    /// Periods without an original_transaction_id of the current (environment, bundle_id), in arrival order until
    /// `ranked`, then in row order from `next` on.
    private var held: [PeriodRecord] = []
    private var heldBytes = 0
    private var ranked = false
    private var next = 0
    /// The last period given on (the order check).
    private var last: PeriodRecord? = nil
    /// Whether every period goes through `store` from here on.
    private var stored = false

    init(store: SpillStore<PeriodRecord>) { self.store = store }

    /// Takes the period of the next purchase (in the purchases' row order); gives on, in row order, the periods
    /// that can no longer be preceded by one to come.
    mutating func add(
        _ p: PeriodRecord, originalID: Bool, _ emit: (PeriodRecord) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        if stored { return try store.add(p.compacted()) }
        if let first = held.first, !PeriodRecord.sameBundle(first, p) { try drainHeld(emit) }
        if !originalID {
            if ranked { throw HistoryError("a purchase without an original_transaction_id came out of order") }
            let kept = p.compacted()
            held.append(kept)
            heldBytes += kept.estimatedBytes
            if heldBytes > store.budget {
                stored = true
                for h in held { try store.add(h) }
                held = []
                heldBytes = 0
            }
            return
        }
        if !ranked && !held.isEmpty { rank() }
        while next < held.count, PeriodRecord.precedes(held[next], p) {
            try give(held[next], emit)
            next += 1
        }
        try give(p, emit)
    }

    /// Gives on every period still held, in row order.
    mutating func finish(_ emit: (PeriodRecord) throws(HistoryError) -> Void) throws(HistoryError) {
        if stored { return try store.reduce(emit) }
        try drainHeld(emit)
    }

    private mutating func rank() {
        let order = PeriodRecord.rowOrder(held)
        held = order.map { held[Int($0)] }
        ranked = true
    }

    private mutating func drainHeld(_ emit: (PeriodRecord) throws(HistoryError) -> Void) throws(HistoryError) {
        if !ranked { rank() }
        while next < held.count {
            try give(held[next], emit)
            next += 1
        }
        held.removeAll(keepingCapacity: true)
        heldBytes = 0
        ranked = false
        next = 0
    }

    /// Gives `p` on after checking that it follows the last period given (a period of the same key as the last
    /// is the same purchase's and is left out).
    private mutating func give(_ p: PeriodRecord, _ emit: (PeriodRecord) throws(HistoryError) -> Void)
        throws(HistoryError)
    {
        if let last {
            guard PeriodRecord.precedes(last, p) else {
                if !PeriodRecord.precedes(p, last) { return }
                throw HistoryError("the periods of the subscriptions came out of order")
            }
        }
        last = p
        try emit(p)
    }
}
