import ReceiptDER
import ReceiptModel
import ReceiptSink
import ReceiptVerify

/// Appends one record's rows from its verdict: exactly one `receipts` row, the `transactions` rows of a valid
/// receipt and its purchase occurrences for the history (`HistoryFeed`), and with `--format ndjson` its
/// verifyReceipt-shaped line, rendered from the verdict and the parser's views (never by reading back the row
/// just appended).
struct RowAppender {
    /// `--format ndjson`: render a verifyReceipt-shaped object per record.
    let renderNDJSON: Bool

    /// The rows of a record rejected before its receipt bytes: only the record's identity is known.
    func append(_ ctx: RowContext, _ v: Verdict, into out: inout ColumnBatch, _ counts: inout BatchCounts) {
        appendReceipt(&out.receipts, ctx, v, payload: nil, fields: ReceiptFields(), decoded: false, digest: nil)
        counts.count(v.status, v.code)
        if renderNDJSON { appendNDJSON(ctx, v, receipt: nil, into: &out) }
    }

    /// The rows of a receipt (`der`, last parsed by `parser`) judged `v`.
    func append(
        _ ctx: RowContext, _ v: Verdict, der: UnsafeRawBufferPointer, parser: ReceiptParser,
        into out: inout ColumnBatch, _ counts: inout BatchCounts
    ) {
        parser.withContent(der) { payload in
            let fields = parser.fields
            // Receipt columns stay null when the container could not be read (contract: "null otherwise").
            let decoded = parser.reachedPayload
            appendReceipt(
                &out.receipts, ctx, v, payload: payload, fields: decoded ? fields : ReceiptFields(), decoded: decoded,
                digest: decoded ? parser.container.digestAlgorithm : nil)
            counts.count(v.status, v.code)
            if v.status == .valid {
                appendTransactions(&out.transactions, ctx, payload: payload, fields: fields)
                appendOccurrences(&out.history, ctx, payload: payload, fields: fields)
            }
            if renderNDJSON {
                // What was decoded is shown for rejected receipts too, unless the container itself was unreadable.
                appendNDJSON(ctx, v, receipt: decoded ? parser.materialize(der) : nil, into: &out)
            }
        }
    }

    /// The record's verdict with its decoded receipt, through the same renderer as `inspect`, as one NDJSON line.
    private func appendNDJSON(_ ctx: RowContext, _ v: Verdict, receipt: Receipt?, into out: inout ColumnBatch) {
        var record = VerifyReceiptJSON.Record(
            source: String(decoding: ctx.source, as: UTF8.self), line: Int64(ctx.line),
            recordID: ctx.recordID.map { String(decoding: $0, as: UTF8.self) }, deviceHashMatches: v.deviceHashMatches)
        record.hasUserField = ctx.userFieldGiven
        record.userID = ctx.userID.map { String(decoding: $0, as: UTF8.self) }
        VerifyReceiptJSON.render(
            receipt: receipt, status: v.status.rawValue, error: v.code.map { ReceiptError($0) },
            detail: v.detail.text(code: v.code), record: record, into: &out.ndjson)
        out.ndjson.append(0x0A)
    }

    /// The record's `receipts` row. `fields` is empty (every field nil) unless the payload was `decoded`; the
    /// in-app count is null then too.
    private func appendReceipt(
        _ t: inout ColumnTable, _ ctx: RowContext, _ v: Verdict, payload: UnsafeRawBufferPointer?,
        fields f: ReceiptFields, decoded: Bool, digest: DigestAlgorithm?
    ) {
        typealias C = ReceiptsColumns
        t.appendRow { w in
            w.string(C.source, ctx.source)
            w.int64(C.line, Int64(ctx.line))
            w.string(C.recordID, ctx.recordID)
            w.int32(C.status, v.status.rawValue)
            if let code = v.code {
                w.string(C.errorCode, code.rawValue)
            } else {
                w.null(string: C.errorCode)
            }
            w.string(C.errorDetail, detail: v.detail, code: v.code)
            w.bool(C.verified, v.verified)
            let p = payload ?? UnsafeRawBufferPointer(start: nil, count: 0)
            w.string(C.receiptType, f.receiptType, in: p)
            w.string(C.bundleID, f.bundleID, in: p)
            w.string(C.applicationVersion, f.applicationVersion, in: p)
            w.string(C.originalApplicationVersion, f.originalApplicationVersion, in: p)
            w.int64(C.appItemID, f.appItemID)
            w.int64(C.downloadID, f.downloadID)
            w.int64(C.versionExternalIdentifier, f.versionExternalIdentifier)
            w.int64(C.receiptCreationDate, f.receiptCreationDate)
            w.int64(C.originalPurchaseDate, f.originalPurchaseDate)
            w.int64(C.expirationDate, f.expirationDate)
            w.int32(C.inAppCount, decoded ? Int32(clamping: f.inAppCount) : nil)
            switch digest {
            case .sha1?: w.string(C.digestAlgorithm, "sha1" as StaticString)
            case .sha256?: w.string(C.digestAlgorithm, "sha256" as StaticString)
            default: w.null(string: C.digestAlgorithm)
            }
            w.string(C.signerSHA256, v.signer)
            if let digest = ctx.receiptSHA256 {
                digest.withHex { w.string(C.receiptSHA256, $0) }
            } else {
                w.null(string: C.receiptSHA256)
            }
            w.bool(C.deviceHashMatches, v.deviceHashMatches)
            w.string(C.recordKind, "receipt" as StaticString)
            w.int32(C.jwsIndex, nil)
            w.string(C.userID, ctx.userID)
        }
    }

    private func appendTransactions(
        _ t: inout ColumnTable, _ ctx: RowContext, payload p: UnsafeRawBufferPointer, fields f: ReceiptFields
    ) {
        typealias C = TransactionsColumns
        let n = f.inAppCount
        precondition(n <= f.inApp.count, "more in-app entries counted than decoded")
        // Column by column over the receipt's entries (ColumnBlockWriter), reading them in place.
        f.inApp.withUnsafeBufferPointer { entries in
            t.appendRows(n) { w in
                let line = Int64(ctx.line)
                w.string(C.source) { _ in ctx.source }
                w.int64(C.line) { _ in line }
                w.string(C.recordID) { _ in ctx.recordID }
                // Non-nullable in the schema: an absent value is written as an empty string.
                let bundle = RowBytes.text(f.bundleID ?? 0..<0, in: p)
                let type = RowBytes.text(f.receiptType ?? 0..<0, in: p)
                w.string(C.bundleID) { _ in bundle }
                w.string(C.receiptType) { _ in type }
                w.int32(C.quantity) { i in RowBytes.narrow(entries[i].quantity) }
                w.string(C.productID) { i in RowBytes.text(entries[i].productID ?? 0..<0, in: p) }
                w.string(C.transactionID) { i in RowBytes.text(entries[i].transactionID ?? 0..<0, in: p) }
                w.string(C.originalTransactionID) { i in RowBytes.text(entries[i].originalTransactionID, in: p) }
                w.int64(C.purchaseDate) { i in entries[i].purchaseDate }
                w.int64(C.originalPurchaseDate) { i in entries[i].originalPurchaseDate }
                w.int64(C.expiresDate) { i in entries[i].expiresDate }
                w.int64(C.cancellationDate) { i in entries[i].cancellationDate }
                w.int64(C.webOrderLineItemID) { i in entries[i].webOrderLineItemID }
                w.bool(C.isTrialPeriod) { i in entries[i].isTrialPeriod.map { $0 != 0 } }
                w.bool(C.isInIntroOfferPeriod) { i in entries[i].isInIntroOfferPeriod.map { $0 != 0 } }
                w.string(C.promotionalOfferID) { i in RowBytes.text(entries[i].promotionalOfferID, in: p) }
                w.int32(C.productType) { i in RowBytes.narrow(entries[i].productType) }
                w.int32(C.cancellationReason) { i in RowBytes.narrow(entries[i].cancellationReason) }
                // The JWS-only columns are null for a receipt's purchases.
                for slot in C.jwsOnlyStrings { w.string(slot) { _ in nil } }
                for slot in C.jwsOnlyInt64s { w.int64(slot) { _ in nil } }
                for slot in C.jwsOnlyInt32s { w.int32(slot) { _ in nil } }
                w.bool(C.isUpgraded) { _ in nil }
            }
        }
    }

    /// The purchase occurrences of a valid receipt, from the same entries as its `transactions` rows (its
    /// receipt_type's class decides its history environment; StoreKit testing receipts do not contribute).
    private func appendOccurrences(
        _ feed: inout HistoryFeed, _ ctx: RowContext, payload p: UnsafeRawBufferPointer, fields f: ReceiptFields
    ) {
        let type = RowBytes.text(f.receiptType, in: p)
        guard feed.isCollecting, let environment = HistoryEnvironment(RecordEnvironment(type)) else { return }
        let created = f.receiptCreationDate
        feed.contributing(created: created)
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        let bundle = RowBytes.text(f.bundleID ?? 0..<0, in: p) ?? none
        let keyPrefix = PurchaseOccurrence.keyPrefix(environment: environment.rawValue, bundleID: bundle)
        let n = f.inAppCount
        f.inApp.withUnsafeBufferPointer { entries in
            for i in 0..<n {
                let e = entries[i]
                feed.beginOccurrence()
                var facts = PurchaseFacts()
                facts.environment = environment
                facts.bundleID = feed.span(bundle)!
                facts.transactionID = feed.span(RowBytes.text(e.transactionID ?? 0..<0, in: p) ?? none)!
                facts.originalTransactionID = feed.span(RowBytes.text(e.originalTransactionID, in: p))
                facts.productID = feed.span(RowBytes.text(e.productID ?? 0..<0, in: p) ?? none)!
                facts.quantity = RowBytes.narrow(e.quantity)
                facts.purchaseDate = e.purchaseDate
                facts.originalPurchaseDate = e.originalPurchaseDate
                facts.expiresDate = e.expiresDate
                facts.webOrderLineItemID = e.webOrderLineItemID
                facts.isTrialPeriod = e.isTrialPeriod.map { $0 != 0 }
                facts.isInIntroOfferPeriod = e.isInIntroOfferPeriod.map { $0 != 0 }
                facts.promotionalOfferID = feed.span(RowBytes.text(e.promotionalOfferID, in: p))
                facts.productType = RowBytes.narrow(e.productType)
                facts.cancellationDate = e.cancellationDate
                facts.cancellationReason = RowBytes.narrow(e.cancellationReason)
                facts.userID = feed.span(ctx.userID)
                facts.multipleUserIDs = ctx.userFieldGiven ? false : nil
                feed.addPurchase(
                    facts, keyPrefix: keyPrefix, created: created, line: Int64(ctx.line), entry: Int64(i))
            }
        }
    }
}
