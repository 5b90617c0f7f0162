import ReceiptModel
import ReceiptSink

/// Fills a history table's rows into column tables of a fixed size and hands each full table to its file writer
/// on the writer's own queue (`HistoryWriteQueue`), so that the files depend only on the rows (never on how the
/// rows were produced) and are encoded while the rows go on being made.
struct HistoryTableBuffer {
    static let chunkRows = 4096
    var table: ColumnTable
    let writer: TableFileWriter
    private let queue: HistoryWriteQueue<ColumnTable>
    private(set) var rows: Int64 = 0

    init(schema: TableSchema, writer: TableFileWriter) {
        table = ColumnTable(schema: schema)
        self.writer = writer
        queue = HistoryWriteQueue(label: schema.name, make: { ColumnTable(schema: schema) }) {
            table throws(HistoryError) in
            do throws(SinkError) {
                try writer.append(table)
            } catch {
                throw HistoryError(error)
            }
            table.removeAll()
        }
    }

    mutating func rowAdded() throws(HistoryError) {
        rows += 1
        if table.rowCount >= Self.chunkRows { try flush() }
    }

    /// Hands the rows so far to the writer's queue.
    mutating func flush() throws(HistoryError) {
        guard table.rowCount > 0 else { return }
        try queue.hand(&table)
    }

    /// Hands the last rows over and waits until every row is in the writer; throws a failure of the writer.
    mutating func drain() throws(HistoryError) {
        try flush()
        try queue.wait()
    }

    /// Waits until the writer's queue is idle (before the writer is aborted).
    func settle() { queue.settle() }

    /// Appends a `purchases` row (the columns `PurchaseRecord.visit` declares).
    mutating func append(_ p: PurchaseRecord, inputs: [String]) throws(HistoryError) {
        // The table moves into the visitor and back, so that it stays uniquely held (no copy on write).
        let t = table
        table = Self.placeholder
        var v = PurchaseRowVisitor(table: consume t, text: p.text, inputs: inputs)
        var r = p
        r.visit(&v)
        table = v.table
        table.rowCount += 1
        try rowAdded()
    }

    /// Stands in for a table while it is lent out (an empty table allocates once, here).
    private static let placeholder = ColumnTable(schema: .purchases)

    /// Appends the `subscriptions` row of `s`, the subscription whose periods are `group`. `renewal` is the newest
    /// renewal info of its key (its columns are null without one); `asOf` the time `state` is judged at.
    mutating func append(
        _ s: SubscriptionRecord, of group: [PeriodRecord], renewal: RenewalRecord?, asOf: Int64
    ) throws(HistoryError) {
        typealias C = SubscriptionsColumns
        group.withUnsafeBufferPointer { group in
            let head = group.baseAddress!
            table.appendRow { w in
                w.string(C.environment, HistoryEnvironment(rawValue: head.pointee.environment)?.name ?? "Production")
                head.pointee.text.withUnsafeBytes { t in
                    w.string(C.bundleID, t.span(head.pointee.bundleID))
                    w.string(C.originalTransactionID, t.span(head.pointee.originalTransactionID))
                }
                periodText(&w, C.firstProductID, head + s.first, head[s.first].productID)
                periodText(&w, C.latestProductID, head + s.latest, head[s.latest].productID)
                w.int64(C.firstPurchaseDate, s.firstPurchaseDate)
                w.int64(C.latestPurchaseDate, s.latestPurchaseDate)
                w.int64(C.latestExpiresDate, s.latestExpiresDate)
                w.int64(C.periods, s.periods)
                w.int64(C.trialPeriods, s.trialPeriods)
                w.int64(C.introPeriods, s.introPeriods)
                w.int64(C.cancelledPeriods, s.cancelledPeriods)
                w.int64(C.observedThrough, s.observedThrough)
                w.string(C.state, s.state(asOf: asOf, renewal: renewal))
                w.int64(C.renewalSignedDate, renewal?.signedDate)
                w.int32(C.autoRenewStatus, renewal?.autoRenewStatus)
                bytes(&w, C.autoRenewProductID, renewal?.autoRenewProductID)
                w.int32(C.expirationIntent, renewal?.expirationIntent)
                w.bool(C.isInBillingRetryPeriod, renewal?.isInBillingRetryPeriod)
                w.int64(C.gracePeriodExpiresDate, renewal?.gracePeriodExpiresDate)
                if let u = s.user {
                    periodText(&w, C.userID, head + u, head[u].userID)
                } else {
                    w.null(string: C.userID)
                }
                w.bool(C.multipleUserIDs, s.multipleUserIDs)
                if let t = s.token {
                    periodText(&w, C.appAccountToken, head + t, head[t].appAccountToken)
                } else {
                    w.null(string: C.appAccountToken)
                }
            }
        }
        try rowAdded()
    }
}

/// Writes the byte string `s` names in period `p` (null when it is nil) into string column `slot`. The period is
/// read in place: a copy would retain its text.
@inline(__always)
func periodText(_ w: inout ColumnRowWriter, _ slot: Int, _ p: UnsafePointer<PeriodRecord>, _ s: TextSpan?) {
    guard let s else { return w.null(string: slot) }
    p.pointee.text.withUnsafeBytes { w.string(slot, $0.span(s)) }
}

private func bytes(_ w: inout ColumnRowWriter, _ slot: Int, _ v: [UInt8]?) {
    guard let v else { return w.null(string: slot) }
    v.withUnsafeBytes { w.string(slot, $0) }
}
