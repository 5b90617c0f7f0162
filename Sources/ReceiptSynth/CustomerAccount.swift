/// One in-app purchase as an account holds it over time: the facts fixed when it was bought, and the times at
/// which receipts start showing its cancellation or stop showing it (a finished consumable).
struct AccountEntry: Sendable {
    var product: Catalog.Product
    var transactionID: String
    /// Nil writes no attribute 1705 (a few real entries lack it).
    var originalTransactionID: String?
    var purchased: Int64
    var originalPurchased: Int64
    var expires: Int64?
    var webOrder: Int64
    var quantity: Int64
    var trial = false
    var intro = false
    var promotionalOfferID: String? = nil
    /// A refund or an upgrade: receipts created at or after this time carry it as 1712.
    var cancelled: Int64? = nil
    /// Attribute 1720, written with the cancellation (refunds only; upgrades leave it out).
    var cancellationReason: Int64? = nil
    /// A consumable finished by the app: receipts created at or after this time no longer hold it.
    var finished: Int64? = nil

    /// Whether a receipt created at `t` holds this entry.
    func visible(at t: Int64) -> Bool { purchased <= t && (finished.map { t < $0 } ?? true) }

    /// The entry as a receipt created at `t` shows it. Dates are written as `2020-09-27T12:07:19Z`.
    func spec(at t: Int64) -> ReceiptSpec {
        var s = ReceiptSpec()
        s.add(1701, .integer(quantity))
        s.add(1702, .utf8(product.id))
        s.add(1703, .utf8(transactionID))
        s.add(1704, .date(purchased, .zulu))
        if let o = originalTransactionID { s.add(1705, .utf8(o)) }
        s.add(1706, .date(originalPurchased, .zulu))
        s.add(1707, .integer(product.type))
        s.add(1708, .date(expires, .zulu))
        s.add(1711, .integer(webOrder))
        let shown = cancelled.flatMap { $0 <= t ? $0 : nil }
        s.add(1712, .date(shown, .zulu))
        s.add(1713, .integer(trial ? 1 : 0))
        if product.type == 3 { s.add(1719, .integer(intro ? 1 : 0)) }
        if shown != nil, let r = cancellationReason { s.add(1720, .integer(r)) }
        if let p = promotionalOfferID { s.add(1721, .utf8(p)) }
        return s
    }
}

/// One receipt a simulated customer sent: when, and how it was signed.
struct CustomerReceipt: Sendable {
    var customer: Int
    /// The receipt's number among its customer's receipts (for its record id).
    var ordinal: Int
    var created: Int64
    /// Where the receipt goes in the data file: its creation time with a few hours of jitter, so that records
    /// are roughly, not strictly, in date order.
    var sortKey: Int64
    var kind: RecordKind
    /// The same line is written twice, one after the other.
    var twice: Bool
}

/// A simulated customer of one app: everything it bought and the receipts it sent.
struct CustomerAccount: Sendable {
    var index: Int
    var app: Catalog.App
    /// `Production`, `ProductionSandbox` or `Xcode`.
    var receiptType: String
    var firstSeen: Int64
    var downloadID: Int64
    var entries: [AccountEntry] = []
    var receipts: [CustomerReceipt] = []

    /// The payload of a receipt created at `created`: a snapshot of the account at that time.
    func spec(created: Int64) -> ReceiptSpec {
        let sandbox = receiptType != "Production"
        var s = ReceiptSpec()
        s.add(0, .utf8(receiptType))
        s.add(1, .integer(sandbox ? 0 : app.appItemID))
        s.add(2, .utf8(app.bundleID))
        s.add(3, .utf8(app.versions[index % app.versions.count]))
        var rng = SplitMix(seed: UInt64(bitPattern: created), index: index)
        s.add(4, .raw(rng.bytes(16)), version: 2)
        s.add(5, .raw(rng.bytes(20)))
        s.add(12, .date(created, .zulu))
        if receiptType == "Production" {
            s.add(15, .integer(downloadID))
            s.add(16, .integer(800_000_000 + Int64(index % 70_000_000)))
        }
        s.add(18, .date(firstSeen, .zulu))
        s.add(19, .utf8(sandbox ? "1.0" : app.versions[0]))
        if receiptType == "Xcode" { s.add(21, .date(PayloadBuilder.xcodeExpirationSentinel, .zulu)) }
        for e in entries where e.visible(at: created) { s.add(17, .inApp(e.spec(at: created))) }
        return s
    }
}
