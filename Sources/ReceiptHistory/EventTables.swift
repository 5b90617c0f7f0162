import ReceiptModel

extension HistoryTableBuffer {
    /// Appends the `events` row of `event`, one of the events of the subscription whose periods are `periods` and
    /// whose user id is `user`.
    mutating func append(event e: SubscriptionEvent, of periods: [PeriodRecord], user: [UInt8]?) throws(HistoryError) {
        typealias C = EventsColumns
        // The periods are read in place (a copy of a period would retain each of its byte strings).
        periods.withUnsafeBufferPointer { periods in
            let p = periods.baseAddress! + e.period
            table.appendRow { w in
                w.string(C.environment, name(p.pointee.key.subscription.environment))
                text(&w, C.bundleID, p.pointee.key.subscription.bundleID)
                text(&w, C.originalTransactionID, p.pointee.key.subscription.originalTransactionID)
                w.int64(C.eventDate, e.date)
                w.string(C.event, e.kind.staticName)
                text(&w, C.transactionID, p.pointee.key.order.transactionID)
                text(&w, C.productID, p.pointee.productID)
                if let q = e.previousPeriod {
                    text(&w, C.previousProductID, periods[q].productID)
                } else {
                    w.null(string: C.previousProductID)
                }
                if e.withOffer, let offer = offerStaticName(p.pointee) {
                    w.string(C.offer, offer)
                } else {
                    w.null(string: C.offer)
                }
                w.int64(C.period, Int64(e.period + 1))
                w.int32(C.cancellationReason, e.kind == .refund ? p.pointee.cancellationReason : nil)
                text(&w, C.userID, user)
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
