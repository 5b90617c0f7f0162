import ReceiptModel

extension HistoryTableBuffer {
    /// Appends the `events` row of `event`, one of the events of the subscription whose periods are `periods` and
    /// whose user id is that of period `user`.
    mutating func append(event e: SubscriptionEvent, of periods: [PeriodRecord], user: Int?) throws(HistoryError) {
        typealias C = EventsColumns
        // The periods are read in place (a copy of a period would retain its text).
        periods.withUnsafeBufferPointer { periods in
            let p = periods.baseAddress! + e.period
            table.appendRow { w in
                w.string(C.environment, name(p.pointee.environment))
                p.pointee.text.withUnsafeBytes { t in
                    w.string(C.bundleID, t.span(p.pointee.bundleID))
                    w.string(C.originalTransactionID, t.span(p.pointee.originalTransactionID))
                    w.string(C.transactionID, t.span(p.pointee.transactionID))
                    w.string(C.productID, t.span(p.pointee.productID))
                }
                w.int64(C.eventDate, e.date)
                w.string(C.event, e.kind.staticName)
                if let q = e.previousPeriod {
                    periodText(&w, C.previousProductID, periods.baseAddress! + q, periods[q].productID)
                } else {
                    w.null(string: C.previousProductID)
                }
                if e.withOffer, let offer = offerStaticName(p) {
                    w.string(C.offer, offer)
                } else {
                    w.null(string: C.offer)
                }
                w.int64(C.period, Int64(e.period + 1))
                w.int32(C.cancellationReason, e.kind == .refund ? p.pointee.cancellationReason : nil)
                if let u = user {
                    periodText(&w, C.userID, periods.baseAddress! + u, periods[u].userID)
                } else {
                    w.null(string: C.userID)
                }
            }
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

/// The `environment` column's value of an environment code.
private func name(_ environment: UInt8) -> StaticString {
    environment == HistoryEnvironment.sandbox.rawValue ? "Sandbox" : "Production"
}

private func text(_ w: inout ColumnRowWriter, _ slot: Int, _ v: [UInt8]?) {
    guard let v else { return w.null(string: slot) }
    v.withUnsafeBytes { w.string(slot, $0) }
}
