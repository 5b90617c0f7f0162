import ReceiptModel

extension HistoryTableBuffer {
    /// Appends the `events` row of `event`, one of the events of the subscription whose periods are `periods`.
    mutating func append(event e: SubscriptionEvent, of periods: [PeriodRecord]) throws(HistoryError) {
        typealias C = EventsColumns
        let p = periods[e.period]
        let key = p.key.subscription
        table.appendRow { w in
            w.string(C.environment, HistoryEnvironment(rawValue: key.environment)?.name ?? "Production")
            text(&w, C.bundleID, key.bundleID)
            text(&w, C.originalTransactionID, key.originalTransactionID)
            w.int64(C.eventDate, e.date)
            w.string(C.event, e.kind.name)
            text(&w, C.transactionID, p.transactionID)
            text(&w, C.productID, p.productID)
            text(&w, C.previousProductID, e.previousPeriod.map { periods[$0].productID })
            w.string(C.offer, e.withOffer ? offerName(p) : nil)
            w.int64(C.period, Int64(e.period + 1))
            w.int32(C.cancellationReason, e.kind == .refund ? p.cancellationReason : nil)
        }
        try rowAdded()
    }

    /// Appends a `daily` row: `counts` are the thirteen counts in column order.
    mutating func append(day: Int64, product: DailyProduct, counts: [Int64]) throws(HistoryError) {
        table.appendRow { w in
            w.int32(DailyColumns.day, Int32(clamping: day))
            w.string(DailyColumns.environment, HistoryEnvironment(rawValue: product.environment)?.name ?? "Production")
            text(&w, DailyColumns.bundleID, product.bundleID)
            text(&w, DailyColumns.productID, product.productID)
            for (slot, n) in counts.enumerated() { w.int64(slot, n) }
        }
        try rowAdded()
    }
}

private func text(_ w: inout ColumnRowWriter, _ slot: Int, _ v: [UInt8]?) {
    guard let v else { return w.null(string: slot) }
    v.withUnsafeBytes { w.string(slot, $0) }
}
