import Foundation
import ReceiptModel

/// One occurrence: a transactions row of a contributing receipt, with where it stands in the recency order.
struct Occurrence {
    /// The row in the batch's transactions table.
    var row: Int
    var recency: Recency
    var environment: UInt8
    /// The receipt's creation date.
    var created: Int64?
}

/// The transactions columns of one batch that occurrences read; an occurrence becomes a record (or merges into
/// one) straight from them, without an intermediate value.
struct OccurrenceColumns {
    let bundle: StringColumn
    let product: StringColumn
    let txid: StringColumn
    let otid: StringColumn
    let promo: StringColumn
    let purchase: PrimitiveColumn<Int64>
    let originalPurchase: PrimitiveColumn<Int64>
    let expires: PrimitiveColumn<Int64>
    let cancellation: PrimitiveColumn<Int64>
    let webOrder: PrimitiveColumn<Int64>
    let quantity: PrimitiveColumn<Int32>
    let productType: PrimitiveColumn<Int32>
    let reason: PrimitiveColumn<Int32>
    let trial: PrimitiveColumn<Bool>
    let intro: PrimitiveColumn<Bool>

    init(_ t: ColumnTable) {
        typealias TC = TransactionsColumns
        let strings = t.strings
        bundle = strings[TC.bundleID]
        product = strings[TC.productID]
        txid = strings[TC.transactionID]
        otid = strings[TC.originalTransactionID]
        promo = strings[TC.promotionalOfferID]
        let int64s = t.int64s
        purchase = int64s[TC.purchaseDate]
        originalPurchase = int64s[TC.originalPurchaseDate]
        expires = int64s[TC.expiresDate]
        cancellation = int64s[TC.cancellationDate]
        webOrder = int64s[TC.webOrderLineItemID]
        quantity = t.int32s[TC.quantity]
        productType = t.int32s[TC.productType]
        reason = t.int32s[TC.cancellationReason]
        trial = t.bools[TC.isTrialPeriod]
        intro = t.bools[TC.isInIntroOfferPeriod]
    }

    /// The bytes of row `r` of `c` (empty when null). The view lives as long as the batch.
    @inline(__always)
    static func view(_ c: StringColumn, _ r: Int) -> UnsafeRawBufferPointer {
        guard c.valid[r] else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        // offsets has count + 1 entries and offsets[r] <= offsets[r + 1] <= bytes.count.
        return UnsafeRawBufferPointer(rebasing: c.bytes[c.offsets[r]..<c.offsets[r + 1]])
    }

    /// The record of a single occurrence.
    func record(_ o: Occurrence) -> PurchaseRecord {
        let i = o.row
        let cancelDate = cancellation[i]
        return PurchaseRecord(
            key: PurchaseKey(
                environment: o.environment, bundleID: Array(Self.view(bundle, i)),
                transactionID: Array(Self.view(txid, i))),
            newest: o.recency, originalTransactionID: otid.valid[i] ? Array(Self.view(otid, i)) : nil,
            productID: Array(Self.view(product, i)),
            quantity: quantity[i], purchaseDate: purchase[i], originalPurchaseDate: originalPurchase[i],
            expiresDate: expires[i], webOrderLineItemID: webOrder[i], isTrialPeriod: trial[i],
            isInIntroOfferPeriod: intro[i], promotionalOfferID: promo.valid[i] ? Array(Self.view(promo, i)) : nil,
            productType: productType[i], cancelledAt: cancelDate == nil ? nil : o.recency,
            cancellationDate: cancelDate, cancellationReason: cancelDate == nil ? nil : reason[i],
            firstSeen: o.created, lastSeen: o.created, occurrences: 1)
    }

    /// Merges occurrence `o` into `p` (a record of the same key) exactly as `p.merge(record(o))` would, copying
    /// byte strings only when they differ from the ones `p` holds. `sameOriginal` says whether the row's
    /// original_transaction_id equals `p`'s (the caller knows without reading `p`'s array). Returns whether
    /// `o` became the newest occurrence.
    @discardableResult
    func merge(_ o: Occurrence, into p: inout PurchaseRecord, sameOriginal: Bool) -> Bool {
        let i = o.row
        p.occurrences += 1
        if let c = o.created {
            p.firstSeen = min(p.firstSeen ?? c, c)
            p.lastSeen = max(p.lastSeen ?? c, c)
        }
        if let d = cancellation[i], p.cancelledAt.map({ $0 < o.recency }) ?? true {
            p.cancelledAt = o.recency
            p.cancellationDate = d
            p.cancellationReason = reason[i]
        }
        guard p.newest < o.recency else { return false }
        p.newest = o.recency
        if !sameOriginal { p.originalTransactionID = otid.valid[i] ? Array(Self.view(otid, i)) : nil }
        if !Self.equal(p.productID, Self.view(product, i)) { p.productID = Array(Self.view(product, i)) }
        p.quantity = quantity[i]
        p.purchaseDate = purchase[i]
        p.originalPurchaseDate = originalPurchase[i]
        p.expiresDate = expires[i]
        p.webOrderLineItemID = webOrder[i]
        p.isTrialPeriod = trial[i]
        p.isInIntroOfferPeriod = intro[i]
        Self.assign(&p.promotionalOfferID, promo, i)
        p.productType = productType[i]
        return true
    }

    /// Sets a nullable byte string to row `i` of `c`, keeping the held array when the bytes are the same.
    @inline(__always)
    static func assign(_ v: inout [UInt8]?, _ c: StringColumn, _ i: Int) {
        guard c.valid[i] else {
            v = nil
            return
        }
        let b = view(c, i)
        if let held = v, equal(held, b) { return }
        v = Array(b)
    }

    @inline(__always)
    static func equal(_ a: [UInt8], _ b: UnsafeRawBufferPointer) -> Bool {
        a.withUnsafeBytes { x in
            x.count == b.count && (x.count == 0 || memcmp(x.baseAddress!, b.baseAddress!, x.count) == 0)
        }
    }
}

/// Finds the occurrences of one written batch: one per in-app entry (transactions row) of a contributing
/// receipt, i.e. a receipts row with status 0 whose receipt_type is not StoreKit testing (`Xcode`, `LocalTesting`:
/// such purchases never reached the App Store; an Xcode receipt's transaction ids are all "0").
///
/// Both tables of a batch are in input order and a transactions row carries its receipt's line, so the rows are
/// matched by walking both once; entries of one receipt keep their order in the receipt.
struct OccurrenceExtractor {
    /// Greatest receipt_creation_date of the contributing receipts seen (the data horizon).
    var horizon: Int64?

    mutating func extract(
        _ batch: ColumnBatch, input: Int, _ body: (OccurrenceColumns, Occurrence) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        typealias RC = ReceiptsColumns
        typealias TC = TransactionsColumns
        let receipts = batch.receipts
        let rLine = receipts.int64s[RC.line]
        let rStatus = receipts.int32s[RC.status]
        let rType = receipts.strings[RC.receiptType]
        let rCreated = receipts.int64s[RC.receiptCreationDate]
        let rJWS = receipts.int32s[RC.jwsIndex]
        var contributing = [Bool](repeating: false, count: receipts.rowCount)
        for r in 0..<receipts.rowCount where rStatus[r] == 0 && Self.environment(rType, r) != nil {
            contributing[r] = true
            if let c = rCreated[r] { horizon = max(horizon ?? c, c) }
        }

        let t = batch.transactions
        let tLine = t.int64s[TC.line]
        let tJWS = t.int32s[TC.jwsIndex]
        let type = t.strings[TC.receiptType]
        let columns = OccurrenceColumns(t)
        var j = 0
        var entry: Int64 = 0
        var lastLine: Int64 = -1
        for i in 0..<t.rowCount {
            let line = tLine[i]!
            while j < receipts.rowCount && rLine[j]! < line { j += 1 }
            // A line of JWS has a receipts row per JWS: a JWS transaction's row is the one of its jws_index
            // (null on both sides for a receipt).
            while j < receipts.rowCount && rLine[j]! == line && rJWS[j] != tJWS[i] { j += 1 }
            guard j < receipts.rowCount, rLine[j]! == line else {
                throw HistoryError(.internalError, detail: "a transactions row of line \(line) has no receipts row")
            }
            if line != lastLine {
                lastLine = line
                entry = 0
            } else {
                entry += 1
            }
            guard contributing[j], let environment = Self.environment(type, i) else { continue }
            let created = rCreated[j]
            let recency = Recency(created: created ?? Int64.min, input: Int64(input), line: line, entry: entry)
            try body(
                columns, Occurrence(row: i, recency: recency, environment: environment.rawValue, created: created))
        }
        withExtendedLifetime(t) {}
    }

    /// The history environment of row `r`'s environment or receipt type (`RecordEnvironment`; null is absent);
    /// nil for StoreKit testing, which never counts.
    static func environment(_ c: StringColumn, _ r: Int) -> HistoryEnvironment? {
        guard c.valid[r] else { return HistoryEnvironment(.absent) }
        return HistoryEnvironment(c.withBytes(r) { RecordEnvironment($0) })
    }
}
