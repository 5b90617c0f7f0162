import Foundation
import ReceiptModel

/// The expected history tables as the export writes them in CSV: RFC 4180, a header row, `\n` line ends, nulls
/// as empty fields, an empty string as `""`, timestamps as `2019-08-08T05:43:20.000Z`, booleans `true`/`false`.
enum HistoryCSV {
    static let purchaseColumns = [
        "environment", "bundle_id", "transaction_id", "original_transaction_id", "product_id", "quantity",
        "purchase_date", "original_purchase_date", "expires_date", "web_order_line_item_id", "is_trial_period",
        "is_in_intro_offer_period", "promotional_offer_id", "product_type", "cancellation_date",
        "cancellation_reason", "first_seen", "last_seen", "occurrences", "source", "line",
    ]

    static let subscriptionColumns = [
        "environment", "bundle_id", "original_transaction_id", "first_product_id", "latest_product_id",
        "first_purchase_date", "latest_purchase_date", "latest_expires_date", "periods", "trial_periods",
        "intro_periods", "cancelled_periods", "observed_through", "state", "renewal_signed_date",
        "auto_renew_status", "auto_renew_product_id", "expiration_intent", "is_in_billing_retry_period",
        "grace_period_expires_date",
    ]

    /// One CSV field.
    enum Field {
        case string(String?)
        case int(Int64?)
        case time(Int64?)
        case bool(Bool?)
    }

    static func purchases(_ rows: [HistoryExpectation.Purchase], source: String) -> String {
        var out = line(purchaseColumns.map { .string($0) })
        for p in rows {
            let f = p.facts
            out += line([
                .string(p.key.environment), .string(p.key.bundleID), .string(p.key.transactionID),
                .string(f.originalTransactionID), .string(f.productID), .int(f.quantity), .time(f.purchaseDate),
                .time(f.originalPurchaseDate), .time(f.expiresDate), .int(f.webOrderLineItemID),
                .bool(f.isTrialPeriod), .bool(f.isInIntroOfferPeriod), .string(f.promotionalOfferID),
                .int(f.productType), .time(p.cancellation?.date), .int(p.cancellation?.reason), .time(p.firstSeen),
                .time(p.lastSeen), .int(p.occurrences), .string(source), .int(Int64(p.line)),
            ])
        }
        return out
    }

    static func subscriptions(_ rows: [HistoryExpectation.Subscription]) -> String {
        var out = line(subscriptionColumns.map { .string($0) })
        for s in rows {
            out += line([
                .string(s.environment), .string(s.bundleID), .string(s.originalTransactionID),
                .string(s.firstProductID), .string(s.latestProductID), .time(s.firstPurchaseDate),
                .time(s.latestPurchaseDate), .time(s.latestExpiresDate), .int(s.periods), .int(s.trialPeriods),
                .int(s.introPeriods), .int(s.cancelledPeriods), .time(s.observedThrough), .string(s.state),
                // The renewal-info columns: generated receipts have no JWS renewal info.
                .time(nil), .int(nil), .string(nil), .int(nil), .bool(nil), .time(nil),
            ])
        }
        return out
    }

    static let eventColumns = [
        "environment", "bundle_id", "original_transaction_id", "event_date", "event", "transaction_id", "product_id",
        "previous_product_id", "offer", "period", "cancellation_reason",
    ]

    static let dailyColumns =
        ["day", "environment", "bundle_id", "product_id"] + HistoryExpectation.snapshotColumns
        + HistoryExpectation.flowColumns

    static func events(_ rows: [HistoryExpectation.Event]) -> String {
        var out = line(eventColumns.map { .string($0) })
        for e in rows {
            out += line([
                .string(e.environment), .string(e.bundleID), .string(e.originalTransactionID), .time(e.date),
                .string(e.event), .string(e.transactionID), .string(e.productID), .string(e.previousProductID),
                .string(e.offer), .int(e.period), .int(e.cancellationReason),
            ])
        }
        return out
    }

    static func daily(_ rows: [HistoryExpectation.Daily]) -> String {
        var out = line(dailyColumns.map { .string($0) })
        for d in rows {
            let date = String(timestamp(d.day * 86_400_000).prefix(10))
            out +=
                line([.string(date), .string(d.environment), .string(d.bundleID), .string(d.productID)])
                .dropLast() + "," + d.counts.map(String.init).joined(separator: ",") + "\n"
        }
        return out
    }

    static func line(_ fields: [Field]) -> String {
        fields.map(text).joined(separator: ",") + "\n"
    }

    static func text(_ f: Field) -> String {
        switch f {
        case .string(let s?): return quoted(s)
        case .int(let v?): return String(v)
        case .time(let ms?): return timestamp(ms)
        case .bool(let b?): return b ? "true" : "false"
        default: return ""
        }
    }

    /// A string field: `""` when empty, quoted (quotes doubled) when it holds `,`, `"`, CR or LF.
    static func quoted(_ s: String) -> String {
        if s.isEmpty { return "\"\"" }
        guard s.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `2019-08-08T05:43:20.000Z`.
    static func timestamp(_ ms: Int64) -> String {
        let f = CivilTime.fields(epochMillis: ms)
        func pad(_ v: Int64, _ w: Int) -> String {
            let s = String(v)
            return s.count >= w ? s : String(repeating: "0", count: w - s.count) + s
        }
        return "\(pad(f.year, 4))-\(pad(Int64(f.month), 2))-\(pad(Int64(f.day), 2))T\(pad(Int64(f.hour), 2)):"
            + "\(pad(Int64(f.minute), 2)):\(pad(Int64(f.second), 2)).\(pad(Int64(f.millisecond), 3))Z"
    }
}
