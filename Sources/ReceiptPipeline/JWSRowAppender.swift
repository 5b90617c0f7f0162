import Foundation
import ReceiptJWS
import ReceiptModel
import ReceiptVerify

/// Appends the rows of a line holding JWS (docs/jws.md): one `receipts` row per JWS, nested ones included, with
/// its `jws_index` in the line; a `transactions` row per valid JWS transaction; and with `--format ndjson` one
/// object per receipts row; a `renewals` row per valid JWS renewal info. Each JWS goes through named steps: decoded
/// and verified (`JWSEvaluator`), judged by the run's policies (`JWSJudge`, the list receipts go through), hashed,
/// then its rows; beside the rows, from the same values, the history's purchase occurrences and counting renewal
/// infos (`HistoryFeed`).
struct JWSRowAppender {
    let evaluator: JWSEvaluator
    let judge: JWSJudge
    let renderNDJSON: Bool
    let hasher = ContentHasher()

    /// The rows of `items`, the JWS of one line in order (nil: an element where a JWS belongs is not a string).
    func append(
        _ ctx: RowContext, _ items: [String?], into out: inout ColumnBatch, _ counts: inout BatchCounts
    ) {
        guard !items.isEmpty else {
            var v = JWSVerdict()
            v.reject(.jwsMalformed, "the line names a JWS body key but holds no JWS")
            var entry: Int64 = 0
            appendRows(ctx, text: nil, v, index: 0, inherited: nil, entry: &entry, into: &out, &counts)
            return
        }
        var index: Int32 = 0
        // The place of the next transactions row among the line's (a purchase occurrence's recency).
        var entry: Int64 = 0
        for item in items {
            guard let text = item else {
                var v = JWSVerdict()
                v.reject(.jwsMalformed, "an element where a JWS belongs is not a string")
                appendRows(ctx, text: nil, v, index: index, inherited: nil, entry: &entry, into: &out, &counts)
                index += 1
                continue
            }
            let verdict = evaluator.evaluate(text)
            appendRows(ctx, text: text, verdict, index: index, inherited: nil, entry: &entry, into: &out, &counts)
            index += 1
            // A notification's nested JWS follow it, each with its own index, bundle and environment from the
            // notification's data when they carry none themselves.
            let data = verdict.fields?.object("data")
            for (key, nested) in verdict.nested {
                appendRows(
                    ctx, text: data?.string(key), nested, index: index, inherited: data, entry: &entry, into: &out,
                    &counts)
                index += 1
            }
        }
    }

    private func appendRows(
        _ ctx: RowContext, text: String?, _ verdict: JWSVerdict, index: Int32, inherited: JWSFields?,
        entry: inout Int64, into out: inout ColumnBatch, _ counts: inout BatchCounts
    ) {
        let judged = judge.judge(verdict, inherited: inherited)
        let v = judged.verdict
        let f = v.fields
        let environment = judged.environment
        let bundle = judged.bundle
        var digest: String? = nil
        if var t = text {
            digest = t.withUTF8 { hasher.sha256(UnsafeRawBufferPointer($0)).hex }
        }
        appendReceipt(&out.receipts, ctx, v, environment: environment, bundle: bundle, digest: digest, index: index)
        counts.count(v.status, v.code, jws: true)
        // The history environment of a valid JWS that counts (nil: none, or StoreKit testing).
        let history =
            out.history.isCollecting && v.status == .valid ? HistoryEnvironment(RecordEnvironment(environment)) : nil
        if history != nil { out.history.contributing(created: f?.signingDate(v.kind)) }
        if v.status == .valid, v.kind == .transaction, let f {
            let purchase = JWSPurchase(f, environment: environment, bundle: bundle)
            appendTransaction(&out.transactions, ctx, f, purchase, index: index)
            if let history { appendOccurrence(&out.history, ctx, purchase, history, entry) }
            entry += 1
        }
        if v.status == .valid, v.kind == .renewal, let f {
            appendRenewal(&out.renewals, ctx, f, environment: environment, index: index)
            if let history { appendRenewalOccurrence(&out.history, ctx, f, history, index: index) }
        }
        if renderNDJSON { appendNDJSON(ctx, v, environment: environment, index: index, into: &out.ndjson) }
    }

    /// The record kind column's value: `jws_<kind>`, or `jws` when the JWS could not be decoded.
    static func recordKind(_ v: JWSVerdict) -> String {
        v.fields == nil ? "jws" : "jws_\(v.kind.rawValue)"
    }

    private func appendReceipt(
        _ t: inout ColumnTable, _ ctx: RowContext, _ v: JWSVerdict, environment: String?, bundle: String?,
        digest: String?, index: Int32
    ) {
        typealias C = ReceiptsColumns
        let f = v.fields
        let app = v.kind == .appTransaction ? f : nil
        t.appendRow { w in
            w.string(C.source, ctx.source)
            w.int64(C.line, Int64(ctx.line))
            w.string(C.recordID, ctx.recordID)
            w.int32(C.status, v.status.rawValue)
            w.string(C.errorCode, v.code?.rawValue)
            w.string(C.errorDetail, v.code == nil ? nil : (v.detail ?? v.code?.rawValue))
            w.bool(C.verified, v.verified)
            w.string(C.receiptType, environment)
            w.string(C.bundleID, bundle)
            w.string(C.applicationVersion, app?.string("applicationVersion"))
            w.string(C.originalApplicationVersion, app?.string("originalApplicationVersion"))
            w.int64(C.appItemID, f?.int64("appAppleId") ?? f?.object("data")?.int64("appAppleId"))
            w.int64(C.downloadID, nil)
            w.int64(C.versionExternalIdentifier, app?.int64("versionExternalIdentifier"))
            w.int64(C.receiptCreationDate, f?.signingDate(v.kind))
            w.int64(C.originalPurchaseDate, f?.int64("originalPurchaseDate"))
            w.int64(C.expirationDate, nil)
            w.int32(C.inAppCount, f == nil ? nil : (v.kind == .transaction ? 1 : 0))
            w.null(string: C.digestAlgorithm)
            w.string(C.signerSHA256, v.leafSHA256)
            w.string(C.receiptSHA256, digest)
            w.bool(C.deviceHashMatches, nil)
            w.string(C.recordKind, Self.recordKind(v))
            w.int32(C.jwsIndex, index)
            w.string(C.userID, ctx.userID)
        }
    }

    private func appendTransaction(
        _ t: inout ColumnTable, _ ctx: RowContext, _ f: JWSFields, _ p: JWSPurchase, index: Int32
    ) {
        typealias C = TransactionsColumns
        t.appendRow { w in
            w.string(C.source, ctx.source)
            w.int64(C.line, Int64(ctx.line))
            w.string(C.recordID, ctx.recordID)
            // Non-nullable in the schema: an absent value is written as an empty string, as for receipts.
            w.string(C.bundleID, p.bundleID)
            w.string(C.receiptType, p.environment ?? "")
            w.int32(C.quantity, p.quantity)
            w.string(C.productID, p.productID)
            w.string(C.transactionID, p.transactionID)
            w.string(C.originalTransactionID, p.originalTransactionID)
            w.int64(C.purchaseDate, p.purchaseDate)
            w.int64(C.originalPurchaseDate, p.originalPurchaseDate)
            w.int64(C.expiresDate, p.expiresDate)
            w.int64(C.cancellationDate, p.revocationDate)
            w.int64(C.webOrderLineItemID, p.webOrderLineItemID)
            w.bool(C.isTrialPeriod, nil)
            w.bool(C.isInIntroOfferPeriod, nil)
            w.null(string: C.promotionalOfferID)
            w.int32(C.productType, nil)
            w.int32(C.cancellationReason, p.revocationReason)
            w.string(C.type, f.string("type"))
            w.string(C.inAppOwnershipType, f.string("inAppOwnershipType"))
            w.int64(C.revocationDate, p.revocationDate)
            w.int32(C.revocationReason, p.revocationReason)
            w.bool(C.isUpgraded, f.bool("isUpgraded"))
            w.int32(C.offerType, p.offer.type)
            w.string(C.offerIdentifier, p.offer.identifier)
            w.string(C.storefront, f.string("storefront"))
            w.string(C.transactionReason, f.string("transactionReason"))
            w.int64(C.price, f.int64("price"))
            w.string(C.currency, f.string("currency"))
            w.string(C.appAccountToken, p.appAccountToken)
            w.string(C.subscriptionGroupIdentifier, f.string("subscriptionGroupIdentifier"))
            w.int64(C.signedDate, p.signedDate)
            w.string(C.environment, f.string("environment"))
            w.int32(C.jwsIndex, index)
            w.string(C.offerDiscountType, p.offer.discountType)
        }
    }

    private func appendRenewal(
        _ t: inout ColumnTable, _ ctx: RowContext, _ f: JWSFields, environment: String?, index: Int32
    ) {
        typealias C = RenewalsColumns
        let int32 = { (k: String) in f.int64(k).flatMap { Int32(exactly: $0) } }
        t.appendRow { w in
            w.string(C.source, ctx.source)
            w.int64(C.line, Int64(ctx.line))
            w.string(C.recordID, ctx.recordID)
            w.int32(C.jwsIndex, index)
            w.string(C.environment, environment)
            w.string(C.originalTransactionID, f.string("originalTransactionId"))
            w.string(C.productID, f.string("productId"))
            w.string(C.autoRenewProductID, f.string("autoRenewProductId"))
            w.int32(C.autoRenewStatus, int32("autoRenewStatus"))
            w.int32(C.expirationIntent, int32("expirationIntent"))
            w.bool(C.isInBillingRetryPeriod, f.bool("isInBillingRetryPeriod"))
            w.int64(C.gracePeriodExpiresDate, f.int64("gracePeriodExpiresDate"))
            w.int32(C.priceIncreaseStatus, int32("priceIncreaseStatus"))
            w.int32(C.offerType, int32("offerType"))
            w.string(C.offerIdentifier, f.string("offerIdentifier"))
            w.int64(C.recentSubscriptionStartDate, f.int64("recentSubscriptionStartDate"))
            w.int64(C.renewalDate, f.int64("renewalDate"))
            w.int64(C.renewalPrice, f.int64("renewalPrice"))
            w.string(C.currency, f.string("currency"))
            w.int64(C.signedDate, f.signedDate)
        }
    }

    /// The purchase occurrence of a valid JWS transaction, from the values of its `transactions` row; `entry` is
    /// its row's place among the line's.
    private func appendOccurrence(
        _ feed: inout HistoryFeed, _ ctx: RowContext, _ p: JWSPurchase, _ environment: HistoryEnvironment,
        _ entry: Int64
    ) {
        feed.beginOccurrence()
        var facts = PurchaseFacts()
        facts.environment = environment
        facts.bundleID = feed.span(p.bundleID)!
        facts.transactionID = feed.span(p.transactionID)!
        facts.originalTransactionID = feed.span(p.originalTransactionID)
        facts.productID = feed.span(p.productID)!
        facts.quantity = p.quantity
        facts.purchaseDate = p.purchaseDate
        facts.originalPurchaseDate = p.originalPurchaseDate
        facts.expiresDate = p.expiresDate
        facts.webOrderLineItemID = p.webOrderLineItemID
        facts.cancellationDate = p.revocationDate
        facts.cancellationReason = p.revocationReason
        facts.isTrialPeriod = p.offer.isTrialPeriod
        facts.isInIntroOfferPeriod = p.offer.isInIntroOfferPeriod
        facts.promotionalOfferID = feed.span(p.offer.promotionalOfferID)
        facts.userID = feed.span(ctx.userID)
        facts.multipleUserIDs = ctx.userFieldGiven ? false : nil
        facts.appAccountToken = feed.span(p.appAccountToken)
        feed.addPurchase(facts, created: p.signedDate, line: Int64(ctx.line), entry: entry)
    }

    /// The renewal info for the history when it counts: one with an original_transaction_id.
    private func appendRenewalOccurrence(
        _ feed: inout HistoryFeed, _ ctx: RowContext, _ f: JWSFields, _ environment: HistoryEnvironment,
        index: Int32
    ) {
        feed.beginOccurrence()
        guard let original = feed.span(f.string("originalTransactionId")) else { return }
        let int32 = { (k: String) in f.int64(k).flatMap { Int32(exactly: $0) } }
        feed.addRenewal(
            RenewalOccurrence(
                environment: environment, originalTransactionID: original,
                autoRenewProductID: feed.span(f.string("autoRenewProductId")), signedDate: f.signedDate,
                autoRenewStatus: int32("autoRenewStatus"), expirationIntent: int32("expirationIntent"),
                isInBillingRetryPeriod: f.bool("isInBillingRetryPeriod"),
                gracePeriodExpiresDate: f.int64("gracePeriodExpiresDate"), line: Int64(ctx.line), jwsIndex: index))
    }

    /// One NDJSON object for a JWS receipts row: its position and verdict, and the decoded payload.
    private func appendNDJSON(
        _ ctx: RowContext, _ v: JWSVerdict, environment: String?, index: Int32, into out: inout [UInt8]
    ) {
        var object = JSONObject([
            "source": .string(String(decoding: ctx.source, as: UTF8.self)), "line": .integer(Int64(ctx.line)),
            "jws_index": .integer(Int64(index)), "record_kind": .string(Self.recordKind(v)),
            "status": .integer(Int64(v.status.rawValue)), "verified": .bool(v.verified),
        ])
        if let id = ctx.recordID { object["record_id"] = .string(String(decoding: id, as: UTF8.self)) }
        if ctx.userFieldGiven {
            object["user_id"] = ctx.userID.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null
        }
        if let code = v.code {
            object["error_code"] = .string(code.rawValue)
            object["error_detail"] = .string(v.detail ?? code.rawValue)
        }
        if let environment { object["environment"] = .string(environment) }
        if let payload = v.fields { object["payload"] = payload.jsonDocument }
        out.append(contentsOf: JSONDocument.object(object).rendered(sortingKeys: true))
        out.append(0x0A)
    }
}

/// The values of a valid JWS transaction that its `transactions` row and its purchase occurrence share, each read
/// from the payload once. Absent ids are empty, as in the row's non-nullable columns.
private struct JWSPurchase {
    let environment: String?
    let bundleID: String
    let transactionID: String
    let originalTransactionID: String?
    let productID: String
    let quantity: Int32?
    let purchaseDate: Int64?
    let originalPurchaseDate: Int64?
    let expiresDate: Int64?
    let revocationDate: Int64?
    let revocationReason: Int32?
    let webOrderLineItemID: Int64?
    let signedDate: Int64?
    let offer: JWSOffer
    let appAccountToken: String?

    init(_ f: JWSFields, environment: String?, bundle: String?) {
        let int32 = { (k: String) in f.int64(k).flatMap { Int32(exactly: $0) } }
        self.environment = environment
        bundleID = bundle ?? ""
        transactionID = f.string("transactionId") ?? ""
        originalTransactionID = f.string("originalTransactionId")
        productID = f.string("productId") ?? ""
        quantity = int32("quantity")
        purchaseDate = f.int64("purchaseDate")
        originalPurchaseDate = f.int64("originalPurchaseDate")
        expiresDate = f.int64("expiresDate")
        revocationDate = f.int64("revocationDate")
        revocationReason = int32("revocationReason")
        webOrderLineItemID = f.int64("webOrderLineItemId")
        signedDate = f.signedDate
        offer = JWSOffer(
            type: int32("offerType"), discountType: f.string("offerDiscountType"),
            identifier: f.string("offerIdentifier"))
        appAccountToken = f.string("appAccountToken")
    }
}
