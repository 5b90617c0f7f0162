import ReceiptModel
import ReceiptSink

/// Fills `purchases` and `subscriptions` rows into column tables of a fixed size and hands each full table to
/// its file writer, so that the files depend only on the rows (never on how the rows were produced).
struct HistoryTableBuffer {
    static let chunkRows = 4096
    var table: ColumnTable
    let writer: TableFileWriter
    private(set) var rows: Int64 = 0

    init(schema: TableSchema, writer: TableFileWriter) {
        table = ColumnTable(schema: schema)
        self.writer = writer
    }

    mutating func rowAdded() throws(HistoryError) {
        rows += 1
        if table.rowCount >= Self.chunkRows { try flush() }
    }

    mutating func flush() throws(HistoryError) {
        guard table.rowCount > 0 else { return }
        do throws(SinkError) {
            try writer.append(table)
        } catch {
            throw HistoryError(error)
        }
        table.removeAll()
    }

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

    /// Appends a `subscriptions` row. `renewal` is the newest renewal info of its key (its columns are null
    /// without one); `asOf` the time `state` is judged at.
    mutating func append(_ s: SubscriptionRecord, renewal: RenewalRecord?, asOf: Int64) throws(HistoryError) {
        typealias C = SubscriptionsColumns
        table.appendRow { w in
            w.string(C.environment, HistoryEnvironment(rawValue: s.key.environment)?.name ?? "Production")
            bytes(&w, C.bundleID, s.key.bundleID)
            bytes(&w, C.originalTransactionID, s.key.originalTransactionID)
            bytes(&w, C.firstProductID, s.firstProductID)
            bytes(&w, C.latestProductID, s.latestProductID)
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
            bytes(&w, C.userID, s.userID)
            w.bool(C.multipleUserIDs, s.multipleUserIDs)
            bytes(&w, C.appAccountToken, s.appAccountToken)
        }
        try rowAdded()
    }
}

private func bytes(_ w: inout ColumnRowWriter, _ slot: Int, _ v: [UInt8]?) {
    guard let v else { return w.null(string: slot) }
    v.withUnsafeBytes { w.string(slot, $0) }
}
