import ReceiptModel

/// The purchases merged by key in memory, within a budget, in one of two forms: as records
/// (`PurchaseRecordTable`), the fastest to merge into and to write out, until they take three quarters of the
/// budget; then, for the rest of the run, in their compact form (`CompactPurchaseStore`), about a third of the
/// memory a record takes, so that a history larger than the budget spills less often, and only the records least
/// recently added to (`drainColdest`). The records move into the compact form at once, within the budget (the
/// compact copy of three quarters of it takes about a quarter). Either form merges the same values, so the rows
/// do not depend on when the table changed form.
struct PurchaseTable {
    private var records: PurchaseRecordTable
    private var compact: CompactPurchaseStore? = nil
    private let budget: Int

    init(budget: Int) {
        self.budget = budget
        records = PurchaseRecordTable(budget: budget)
    }

    /// Whether the table holds its purchases in the compact form.
    var isCompact: Bool { compact != nil }
    var isEmpty: Bool { records.isEmpty && (compact?.isEmpty ?? true) }
    var count: Int { records.count + (compact?.count ?? 0) }

    /// The bytes the table holds, in either form.
    var bytes: Int { records.bytes + (compact?.bytes ?? 0) }

    /// Records handed out at once by `drain(_:)` from the compact form: about a tenth of the budget decoded.
    private var chunk: Int { max(4096, budget / 4096) }

    /// Adds occurrence `o` of input `input`, whose text is `text`.
    @inline(__always)
    mutating func add(_ o: PurchaseOccurrence, input: Int, text: UnsafeRawBufferPointer) {
        if compact != nil {
            compact!.add(o, input: input, text: text)
            return
        }
        records.add(o, input: input, text: text)
        if records.bytes > budget / 4 * 3 && CompactPurchaseStore.budgets.contains(budget) { becomeCompact() }
    }

    /// Moves the records into the compact form.
    private mutating func becomeCompact() {
        var store = CompactPurchaseStore(budget: budget)
        store.reserve(records: records.count)
        for r in records.drain() { store.insert(r) }
        compact = store
    }

    /// Reads ahead the memory that adding occurrences of these key hashes will touch.
    mutating func warm(_ hashes: UnsafeBufferPointer<UInt64>) {
        if compact != nil { compact!.warm(hashes) } else { records.warm(hashes) }
    }

    /// Gives every record to `body` (as records, a chunk at a time when compact), leaving the table empty in the
    /// same form with its storage kept.
    mutating func drain(_ body: ([PurchaseRecord]) throws(HistoryError) -> Void) throws(HistoryError) {
        if compact != nil {
            try compact!.drain(chunk: chunk, body)
            return
        }
        try body(records.records)
        records.removeAll()
    }

    /// Gives records to `body` to make room: a compact table those added to least recently
    /// (`CompactPurchaseStore.drainColdest`), keeping the rest, or all of them when that frees less than a
    /// sixteenth of the budget (the index and the dictionary stay, so that spills would come ever sooner); a table
    /// of records all of them, as `drain(_:)`.
    mutating func drainColdest(_ body: ([PurchaseRecord]) throws(HistoryError) -> Void) throws(HistoryError) {
        guard compact != nil else { return try drain(body) }
        let before = bytes
        try compact!.drainColdest(chunk: chunk, body)
        if before - bytes < budget / 16 { try drain(body) }
    }

    /// Whether `drainInOrder` takes the records: the table is compact and their order keys fit beside it in half
    /// the budget.
    var drainsInOrder: Bool {
        guard let c = compact else { return false }
        return c.count * CompactPurchaseStore.orderKeyBytes <= budget / 2
    }

    /// Gives every record of a compact table to `body`, one at a time in the row order of `purchases`, leaving the
    /// table empty.
    mutating func drainInOrder(_ body: (PurchaseRecord) throws(HistoryError) -> Void) throws(HistoryError) {
        try compact?.drainInOrder(body)
    }

    /// Takes every record out, leaving the table empty; the compact form must have been drained first (its
    /// records decoded at once could take several times the budget).
    mutating func drain() -> [PurchaseRecord] {
        precondition(compact?.isEmpty ?? true, "a compact table is drained a chunk at a time")
        return records.drain()
    }
}
