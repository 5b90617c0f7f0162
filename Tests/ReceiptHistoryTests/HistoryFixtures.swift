import Foundation
import ReceiptHistory
import ReceiptModel
import ReceiptSink

/// One in-app entry of a hand-made receipt (the transactions row the exporter would write for it).
struct Entry {
    var transactionID: String
    var originalTransactionID: String? = nil
    var product = "com.example.monthly"
    var purchase: Int64? = nil
    var expires: Int64? = nil
    var cancellation: Int64? = nil
    var reason: Int32? = nil
    var trial: Bool? = false
    var intro: Bool? = false
    var quantity: Int32? = 1
}

/// A hand-made receipt: its receipts row fields and entries.
struct Receipt {
    var line: Int64
    var created: Int64?
    var status: Int32 = 0
    var type: String? = "Production"
    var bundle = "com.example.app"
    var entries: [Entry] = []
}

/// A hand-made JWS renewal info on a line of its own (its receipts row and, when valid, its renewals row).
struct Renewal {
    var line: Int64
    var jwsIndex: Int32 = 0
    var status: Int32 = 0
    var environment: String? = "Production"
    var originalTransactionID: String?
    var signed: Int64?
    var autoRenewStatus: Int32? = 1
    var autoRenewProductID: String? = nil
    var expirationIntent: Int32? = nil
    var billingRetry: Bool? = false
    var graceExpires: Int64? = nil
}

/// Times in the cases: day `n` of 2024 at midnight UTC, in epoch milliseconds.
func day(_ n: Int64) -> Int64 { (19_723 + n) * 86_400_000 }

/// The batch the writer stage would hold for these receipts: rows in input (line) order, as a batch is.
func batch(_ receipts: [Receipt], renewals: [Renewal] = [], source: String = "in.ndjson") -> ColumnBatch {
    var b = ColumnBatch(sequence: 0)
    var pending = renewals.sorted { ($0.line, $0.jwsIndex) < ($1.line, $1.jwsIndex) }[...]
    for r in receipts.sorted(by: { $0.line < $1.line }) {
        while let n = pending.first, n.line < r.line {
            appendRenewal(n, into: &b, source: source)
            pending.removeFirst()
        }
        b.receipts.appendRow { w in
            typealias C = ReceiptsColumns
            for s in 0..<12 {
                switch s {
                case C.source: w.string(s, source)
                case C.recordKind: w.string(s, "receipt")
                case C.receiptType: w.string(s, r.type)
                case C.bundleID: w.string(s, r.bundle)
                default: w.null(string: s)
                }
            }
            for s in 0..<7 {
                switch s {
                case C.line: w.int64(s, r.line)
                case C.receiptCreationDate: w.int64(s, r.created)
                default: w.int64(s, nil)
                }
            }
            w.int32(C.status, r.status)
            w.int32(C.inAppCount, Int32(r.entries.count))
            w.int32(C.jwsIndex, nil)
            w.bool(C.verified, r.status == 0)
            w.bool(C.deviceHashMatches, nil)
        }
        for e in r.entries {
            b.transactions.appendRow { w in
                typealias C = TransactionsColumns
                w.string(C.source, source)
                w.null(string: C.recordID)
                w.string(C.bundleID, r.bundle)
                w.string(C.receiptType, r.type ?? "")
                w.string(C.productID, e.product)
                w.string(C.transactionID, e.transactionID)
                w.string(C.originalTransactionID, e.originalTransactionID)
                w.null(string: C.promotionalOfferID)
                w.int64(C.line, r.line)
                w.int64(C.purchaseDate, e.purchase)
                w.int64(C.originalPurchaseDate, e.purchase)
                w.int64(C.expiresDate, e.expires)
                w.int64(C.cancellationDate, e.cancellation)
                w.int64(C.webOrderLineItemID, nil)
                w.int32(C.quantity, e.quantity)
                w.int32(C.productType, nil)
                w.int32(C.cancellationReason, e.reason)
                w.bool(C.isTrialPeriod, e.trial)
                w.bool(C.isInIntroOfferPeriod, e.intro)
                for s in C.jwsOnlyStrings { w.null(string: s) }
                for s in C.jwsOnlyInt64s { w.int64(s, nil) }
                for s in C.jwsOnlyInt32s { w.int32(s, nil) }
                w.bool(C.isUpgraded, nil)
            }
        }
    }
    for n in pending { appendRenewal(n, into: &b, source: source) }
    return b
}

/// The rows the exporter writes for a JWS renewal info: a receipts row, and a renewals row when it is valid.
private func appendRenewal(_ n: Renewal, into b: inout ColumnBatch, source: String) {
    b.receipts.appendRow { w in
        typealias C = ReceiptsColumns
        for s in 0..<12 {
            switch s {
            case C.source: w.string(s, source)
            case C.recordKind: w.string(s, "jws_renewal")
            case C.receiptType: w.string(s, n.environment)
            default: w.null(string: s)
            }
        }
        for s in 0..<7 {
            switch s {
            case C.line: w.int64(s, n.line)
            case C.receiptCreationDate: w.int64(s, n.signed)
            default: w.int64(s, nil)
            }
        }
        w.int32(C.status, n.status)
        w.int32(C.inAppCount, 0)
        w.int32(C.jwsIndex, n.jwsIndex)
        w.bool(C.verified, n.status == 0)
        w.bool(C.deviceHashMatches, nil)
    }
    guard n.status == 0 else { return }
    b.renewals.appendRow { w in
        typealias C = RenewalsColumns
        w.string(C.source, source)
        w.int64(C.line, n.line)
        w.null(string: C.recordID)
        w.int32(C.jwsIndex, n.jwsIndex)
        w.string(C.environment, n.environment)
        w.string(C.originalTransactionID, n.originalTransactionID)
        w.null(string: C.productID)
        w.string(C.autoRenewProductID, n.autoRenewProductID)
        w.int32(C.autoRenewStatus, n.autoRenewStatus)
        w.int32(C.expirationIntent, n.expirationIntent)
        w.bool(C.isInBillingRetryPeriod, n.billingRetry)
        w.int64(C.gracePeriodExpiresDate, n.graceExpires)
        w.int32(C.priceIncreaseStatus, nil)
        w.int32(C.offerType, nil)
        w.null(string: C.offerIdentifier)
        w.int64(C.recentSubscriptionStartDate, nil)
        w.int64(C.renewalDate, nil)
        w.int64(C.renewalPrice, nil)
        w.null(string: C.currency)
        w.int64(C.signedDate, n.signed)
    }
}

/// The two tables of a history run, as CSV text and as rows of column name to field text ("" for null).
struct HistoryTables {
    var purchasesCSV: String
    var subscriptionsCSV: String
    var result: HistoryResult

    var purchases: [[String: String]] { Self.rows(purchasesCSV) }
    var subscriptions: [[String: String]] { Self.rows(subscriptionsCSV) }

    /// Splits the project's CSV (the cases hold no quoted fields).
    static func rows(_ text: String) -> [[String: String]] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard let header = lines.first?.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        else { return [] }
        return lines.dropFirst().map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return Dictionary(uniqueKeysWithValues: zip(header, fields))
        }
    }
}

func temporaryDirectory(_ name: String) -> String {
    let d = FileManager.default.temporaryDirectory.appendingPathComponent("rf-history-\(name)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
    return d.path
}

/// Runs the history stage over `batches` (each with its input index) and reads back the CSV tables.
func runHistory(
    _ batches: [(ColumnBatch, Int)], inputs: [String] = ["in.ndjson"], asOf: Int64? = nil,
    memoryBudget: Int? = nil, format: OutputFormat = .csv
) throws -> (HistoryTables, String) {
    let dir = temporaryDirectory("run")
    let collector = HistoryCollector(directory: dir, inputs: inputs, resumable: false, memoryBudget: memoryBudget)
    for (b, input) in batches { try collector.add(b, input: input) }
    let result = try collector.finish(asOf: asOf, format: format, metadata: RunMetadata())
    collector.removeSpill()
    let ext = format.fileExtension
    let p = try String(contentsOfFile: dir + "/purchases.\(ext)", encoding: .isoLatin1)
    let s = try String(contentsOfFile: dir + "/subscriptions.\(ext)", encoding: .isoLatin1)
    return (HistoryTables(purchasesCSV: p, subscriptionsCSV: s, result: result), dir)
}

/// CSV text of a timestamp, as the tables write it.
func ts(_ ms: Int64) -> String {
    var out: [UInt8] = []
    CivilTime.appendISO8601(epochMillis: ms, into: &out)
    return String(decoding: out, as: UTF8.self)
}
