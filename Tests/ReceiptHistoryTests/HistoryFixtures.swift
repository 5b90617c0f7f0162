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
    /// StoreKit 2's appAccountToken (a JWS transaction's).
    var token: String? = nil
}

/// A hand-made receipt: its receipts row fields and entries.
struct Receipt {
    var line: Int64
    var created: Int64?
    var status: Int32 = 0
    var type: String? = "Production"
    var bundle = "com.example.app"
    var entries: [Entry] = []
    /// The record's `--user-field` value, and whether the run names a user field.
    var user: String? = nil
    var userField = false
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

/// The batch the writer stage would hold for these receipts and renewal infos: their history feed, in input
/// (line) order, as the row appenders make it: a receipt or renewal info contributes when it is valid (status 0)
/// and its environment is not StoreKit testing (`Xcode`, `LocalTesting`); each entry of a contributing receipt is an occurrence, each contributing
/// renewal info with an original_transaction_id counts.
func batch(_ receipts: [Receipt], renewals: [Renewal] = [], source: String = "in.ndjson") -> ColumnBatch {
    var b = ColumnBatch(sequence: 0)
    var pending = renewals.sorted { ($0.line, $0.jwsIndex) < ($1.line, $1.jwsIndex) }[...]
    for r in receipts.sorted(by: { $0.line < $1.line }) {
        while let n = pending.first, n.line < r.line {
            feedRenewal(n, into: &b.history)
            pending.removeFirst()
        }
        guard r.status == 0, let environment = HistoryEnvironment(RecordEnvironment(r.type)) else { continue }
        b.history.contributing(created: r.created)
        for (i, e) in r.entries.enumerated() {
            b.history.beginOccurrence()
            var f = PurchaseFacts()
            f.environment = environment
            f.bundleID = b.history.span(r.bundle)!
            f.transactionID = b.history.span(e.transactionID)!
            f.originalTransactionID = b.history.span(e.originalTransactionID)
            f.productID = b.history.span(e.product)!
            f.quantity = e.quantity
            f.purchaseDate = e.purchase
            f.originalPurchaseDate = e.purchase
            f.expiresDate = e.expires
            f.isTrialPeriod = e.trial
            f.isInIntroOfferPeriod = e.intro
            f.cancellationDate = e.cancellation
            f.cancellationReason = e.reason
            f.userID = b.history.span(r.user)
            f.multipleUserIDs = r.userField ? false : nil
            f.appAccountToken = b.history.span(e.token)
            b.history.addPurchase(f, created: r.created, line: r.line, entry: Int64(i))
        }
    }
    for n in pending { feedRenewal(n, into: &b.history) }
    return b
}

/// What the JWS row appender feeds for a renewal info.
private func feedRenewal(_ n: Renewal, into feed: inout HistoryFeed) {
    guard n.status == 0, let environment = HistoryEnvironment(RecordEnvironment(n.environment)) else { return }
    feed.contributing(created: n.signed)
    feed.beginOccurrence()
    guard let original = feed.span(n.originalTransactionID) else { return }
    feed.addRenewal(
        RenewalOccurrence(
            environment: environment, originalTransactionID: original,
            autoRenewProductID: feed.span(n.autoRenewProductID), signedDate: n.signed,
            autoRenewStatus: n.autoRenewStatus, expirationIntent: n.expirationIntent,
            isInBillingRetryPeriod: n.billingRetry, gracePeriodExpiresDate: n.graceExpires, line: n.line,
            jwsIndex: n.jwsIndex))
}

/// The tables of a history run, as CSV text and as rows of column name to field text ("" for null).
struct HistoryTables {
    var purchasesCSV: String
    var subscriptionsCSV: String
    var eventsCSV: String = ""
    var dailyCSV: String = ""
    var result: HistoryResult

    var purchases: [[String: String]] { Self.rows(purchasesCSV) }
    var subscriptions: [[String: String]] { Self.rows(subscriptionsCSV) }
    var events: [[String: String]] { Self.rows(eventsCSV) }
    var daily: [[String: String]] { Self.rows(dailyCSV) }

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
    memoryBudget: Int? = nil, format: OutputFormat = .csv, threads: Int = 1
) throws -> (HistoryTables, String) {
    let dir = temporaryDirectory("run")
    let collector = HistoryCollector(directory: dir, inputs: inputs, resumable: false, memoryBudget: memoryBudget)
    collector.threads = threads
    for (b, input) in batches { try collector.add(b, input: input) }
    let result = try collector.finish(asOf: asOf, format: format, metadata: RunMetadata())
    collector.removeSpill()
    let ext = format.fileExtension
    let p = try String(contentsOfFile: dir + "/purchases.\(ext)", encoding: .isoLatin1)
    let s = try String(contentsOfFile: dir + "/subscriptions.\(ext)", encoding: .isoLatin1)
    let e = try String(contentsOfFile: dir + "/events.\(ext)", encoding: .isoLatin1)
    let d = try String(contentsOfFile: dir + "/daily.\(ext)", encoding: .isoLatin1)
    return (HistoryTables(purchasesCSV: p, subscriptionsCSV: s, eventsCSV: e, dailyCSV: d, result: result), dir)
}

/// CSV text of a timestamp, as the tables write it.
func ts(_ ms: Int64) -> String {
    var out: [UInt8] = []
    CivilTime.appendISO8601(epochMillis: ms, into: &out)
    return String(decoding: out, as: UTF8.self)
}
