import Foundation
import ReceiptIO
import ReceiptModel
import ReceiptPipeline
import ReceiptTestSupport
import ReceiptVerify
import Testing

/// The history feed the row appenders make beside the rows: checked against the rows of the same batches, on the
/// committed samples (receipts with every bad kind and Xcode receipts; JWS of every shape with renewal infos).
@Suite struct HistoryFeedTests {
    /// Every batch of `file`, processed as a worker does.
    func batches(_ file: String, anchor: String) throws -> [ColumnBatch] {
        let data = Fixtures.dataDir
        var config = PipelineConfig()
        config.inputs = [data.appendingPathComponent(file).path]
        config.reader = ReaderOptions(batchBytes: 256 << 10)
        let cache = ChainCache(anchors: try TrustAnchors(paths: [data.appendingPathComponent(anchor).path]))
        let processor = RecordProcessor(config: config, cache: cache)
        let reader = try RecordReader.open(config.inputs[0], options: config.reader)
        let batch = RecordBatch(capacity: config.reader.batchCapacity, maxRecords: config.reader.maxRecordsPerBatch)
        var out: [ColumnBatch] = []
        var counts = BatchCounts()
        while try reader.fill(batch) {
            var columns = ColumnBatch(sequence: 0)
            processor.process(batch, into: &columns, counts: &counts)
            out.append(columns)
        }
        return out
    }

    /// The facts of the transactions rows whose receipts row contributes (status 0, receipt_type not StoreKit testing), in
    /// order, as text; and the greatest receipt_creation_date of the contributing receipts rows. A JWS row's offer
    /// columns read as a receipt's flags (docs/history.md, "Offers of JWS transactions").
    func fromRows(_ b: ColumnBatch) -> (rows: [String], horizon: Int64?, excluded: Int) {
        typealias R = ReceiptsColumns
        typealias T = TransactionsColumns
        let r = b.receipts
        var contributing: [String: Int64?] = [:]
        var users: [String: String] = [:]
        var horizon: Int64? = nil
        var excludedReceipts = Set<String>()
        for i in 0..<r.rowCount {
            let key = "\(r.int64s[R.line][i]!)/\(r.int32s[R.jwsIndex][i].map(String.init) ?? "-")"
            let created = r.int64s[R.receiptCreationDate][i]
            if r.int32s[R.status][i] == 0 && !RecordEnvironment(r.strings[R.receiptType][i]).isStoreKitTesting {
                contributing[key] = created
                users[key] = r.strings[R.userID][i] ?? "<null>"
                if let c = created { horizon = max(horizon ?? c, c) }
            } else {
                excludedReceipts.insert(key)
            }
        }
        let t = b.transactions
        var rows: [String] = []
        var excluded = 0
        for i in 0..<t.rowCount {
            let key = "\(t.int64s[T.line][i]!)/\(t.int32s[T.jwsIndex][i].map(String.init) ?? "-")"
            guard let created = contributing[key] else {
                if excludedReceipts.contains(key) { excluded += 1 }
                continue
            }
            let type = t.strings[T.receiptType][i]
            var trial = t.bools[T.isTrialPeriod][i]
            var intro = t.bools[T.isInIntroOfferPeriod][i]
            var promotional = t.strings[T.promotionalOfferID][i]
            if t.int32s[T.jwsIndex][i] != nil {
                let offer = t.int32s[T.offerType][i]
                let discount = t.strings[T.offerDiscountType][i]
                trial = offer != 1 ? false : discount.map { $0 == "FREE_TRIAL" }
                intro = offer == 1 && (discount == nil || discount == "PAY_AS_YOU_GO" || discount == "PAY_UP_FRONT")
                promotional = offer == 2 ? t.strings[T.offerIdentifier][i] : nil
            }
            rows.append(
                [
                    RecordEnvironment(type) == .sandbox ? "Sandbox" : "Production", t.strings[T.bundleID][i] ?? "",
                    t.strings[T.transactionID][i] ?? "", t.strings[T.originalTransactionID][i] ?? "<null>",
                    t.strings[T.productID][i] ?? "", "\(t.int32s[T.quantity][i] as Any)",
                    "\(t.int64s[T.purchaseDate][i] as Any)", "\(t.int64s[T.originalPurchaseDate][i] as Any)",
                    "\(t.int64s[T.expiresDate][i] as Any)", "\(t.int64s[T.webOrderLineItemID][i] as Any)",
                    "\(trial as Any)", "\(intro as Any)", promotional ?? "<null>",
                    "\(t.int32s[T.productType][i] as Any)", "\(t.int64s[T.cancellationDate][i] as Any)",
                    "\(t.int32s[T.cancellationReason][i] as Any)", users[key]!,
                    t.strings[T.appAccountToken][i] ?? "<null>", "\(created as Any)", "\(t.int64s[T.line][i]!)",
                ].joined(separator: "|"))
        }
        return (rows, horizon, excluded)
    }

    /// The feed's occurrences as the same text.
    func fromFeed(_ b: ColumnBatch) -> [String] {
        let feed = b.history
        return feed.purchases.map { o in
            let f = o.facts
            func text(_ s: TextSpan?) -> String {
                guard let s else { return "<null>" }
                return String(decoding: feed.bytes(s, of: o), as: UTF8.self)
            }
            return [
                f.environment.name, text(f.bundleID), text(f.transactionID), text(f.originalTransactionID),
                text(f.productID), "\(f.quantity as Any)", "\(f.purchaseDate as Any)",
                "\(f.originalPurchaseDate as Any)", "\(f.expiresDate as Any)", "\(f.webOrderLineItemID as Any)",
                "\(f.isTrialPeriod as Any)", "\(f.isInIntroOfferPeriod as Any)", text(f.promotionalOfferID),
                "\(f.productType as Any)", "\(f.cancellationDate as Any)", "\(f.cancellationReason as Any)",
                text(f.userID), text(f.appAccountToken), "\(o.created as Any)", "\(o.line)",
            ].joined(separator: "|")
        }
    }

    @Test(
        "a purchase occurrence for each transactions row of a valid, non-testing record, with its facts; the horizon is the newest such record",
        arguments: [("sample.ndjson.zst", "test-root.pem"), ("sample-jws.ndjson.zst", "test-jws-root.pem")])
    func occurrencesMatchTheRows(file: String, anchor: String) throws {
        var occurrences = 0
        var excluded = 0
        for b in try batches(file, anchor: anchor) {
            let expected = fromRows(b)
            #expect(fromFeed(b) == expected.rows)
            #expect(b.history.horizon == expected.horizon)
            occurrences += expected.rows.count
            excluded += expected.excluded
        }
        #expect(occurrences > 100)
        if file == "sample.ndjson.zst" {
            // Xcode receipts are valid and have transactions rows: the comparison above left them out.
            #expect(excluded > 0)
        }
    }

    @Test("a counting renewal info for each renewals row of a valid, non-testing JWS with an original transaction id")
    func renewalsMatchTheRows() throws {
        typealias C = RenewalsColumns
        var total = 0
        for b in try batches("sample-jws.ndjson.zst", anchor: "test-jws-root.pem") {
            let t = b.renewals
            var expected: [String] = []
            for i in 0..<t.rowCount where t.strings[C.originalTransactionID][i] != nil {
                let environment = t.strings[C.environment][i]
                guard !RecordEnvironment(environment).isStoreKitTesting else { continue }
                expected.append(
                    [
                        RecordEnvironment(environment) == .sandbox ? "Sandbox" : "Production",
                        t.strings[C.originalTransactionID][i]!, t.strings[C.autoRenewProductID][i] ?? "<null>",
                        "\(t.int64s[C.signedDate][i] as Any)", "\(t.int32s[C.autoRenewStatus][i] as Any)",
                        "\(t.int32s[C.expirationIntent][i] as Any)", "\(t.bools[C.isInBillingRetryPeriod][i] as Any)",
                        "\(t.int64s[C.gracePeriodExpiresDate][i] as Any)", "\(t.int64s[C.line][i]!)",
                        "\(t.int32s[C.jwsIndex][i]!)",
                    ].joined(separator: "|"))
            }
            let feed = b.history
            let text = { (s: TextSpan) in
                String(decoding: feed.text[Int(s.offset)..<Int(s.offset + s.count)], as: UTF8.self)
            }
            let fed = feed.renewals.map { n in
                [
                    n.environment.name, text(n.originalTransactionID), n.autoRenewProductID.map(text) ?? "<null>",
                    "\(n.signedDate as Any)", "\(n.autoRenewStatus as Any)", "\(n.expirationIntent as Any)",
                    "\(n.isInBillingRetryPeriod as Any)", "\(n.gracePeriodExpiresDate as Any)", "\(n.line)",
                    "\(n.jwsIndex)",
                ].joined(separator: "|")
            }
            #expect(fed == expected)
            total += expected.count
        }
        #expect(total > 10)
    }
}
