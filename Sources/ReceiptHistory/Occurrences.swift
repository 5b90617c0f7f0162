import ReceiptModel

/// Turns the rows of one written batch into occurrences: one per in-app entry (transactions row) of a
/// contributing receipt, i.e. a receipts row with status 0 whose receipt_type is not `Xcode` (StoreKit testing
/// receipts, whose transaction ids are all "0", never reached the App Store).
///
/// Both tables of a batch are in input order and a transactions row carries its receipt's line, so the rows are
/// matched by walking both once; entries of one receipt keep their order in the receipt.
struct OccurrenceExtractor {
    /// Greatest receipt_creation_date of the contributing receipts seen (the data horizon).
    var horizon: Int64?

    mutating func extract(_ batch: ColumnBatch, input: Int, _ body: (PurchaseRecord) throws(HistoryError) -> Void)
        throws(HistoryError)
    {
        typealias RC = ReceiptsColumns
        typealias TC = TransactionsColumns
        let receipts = batch.receipts
        let rLine = receipts.int64s[RC.line]
        let rStatus = receipts.int32s[RC.status]
        let rType = receipts.strings[RC.receiptType]
        let rCreated = receipts.int64s[RC.receiptCreationDate]
        let rJWS = receipts.int32s[RC.jwsIndex]
        var contributing = [Bool](repeating: false, count: receipts.rowCount)
        for r in 0..<receipts.rowCount where rStatus[r] == 0 && !Self.isXcode(rType, r) {
            contributing[r] = true
            if let c = rCreated[r] { horizon = max(horizon ?? c, c) }
        }

        let t = batch.transactions
        let tLine = t.int64s[TC.line]
        let tJWS = t.int32s[TC.jwsIndex]
        let strings = t.strings
        let bundle = strings[TC.bundleID]
        let type = strings[TC.receiptType]
        let product = strings[TC.productID]
        let txid = strings[TC.transactionID]
        let otid = strings[TC.originalTransactionID]
        let promo = strings[TC.promotionalOfferID]
        let int64s = t.int64s
        let purchase = int64s[TC.purchaseDate]
        let originalPurchase = int64s[TC.originalPurchaseDate]
        let expires = int64s[TC.expiresDate]
        let cancellation = int64s[TC.cancellationDate]
        let webOrder = int64s[TC.webOrderLineItemID]
        let quantity = t.int32s[TC.quantity]
        let productType = t.int32s[TC.productType]
        let reason = t.int32s[TC.cancellationReason]
        let trial = t.bools[TC.isTrialPeriod]
        let intro = t.bools[TC.isInIntroOfferPeriod]

        // Bundle and product ids repeat from row to row: the previous row's array is reused when the bytes match.
        var lastBundle: [UInt8] = []
        var lastProduct: [UInt8] = []
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
                throw HistoryError("internal error: a transactions row of line \(line) has no receipts row")
            }
            if line != lastLine {
                lastLine = line
                entry = 0
            } else {
                entry += 1
            }
            guard contributing[j] else { continue }
            let created = rCreated[j]
            let recency = Recency(created: created ?? Int64.min, input: Int64(input), line: line, entry: entry)
            let environment: HistoryEnvironment = Self.endsInSandbox(type, i) ? .sandbox : .production
            let cancelDate = cancellation[i]
            let record = PurchaseRecord(
                key: PurchaseKey(
                    environment: environment.rawValue, bundleID: Self.reuse(bundle, i, &lastBundle),
                    transactionID: Self.bytes(txid, i) ?? []),
                newest: recency, originalTransactionID: Self.bytes(otid, i),
                productID: Self.reuse(product, i, &lastProduct),
                quantity: quantity[i], purchaseDate: purchase[i], originalPurchaseDate: originalPurchase[i],
                expiresDate: expires[i], webOrderLineItemID: webOrder[i], isTrialPeriod: trial[i],
                isInIntroOfferPeriod: intro[i], promotionalOfferID: Self.bytes(promo, i), productType: productType[i],
                cancelledAt: cancelDate == nil ? nil : recency, cancellationDate: cancelDate,
                cancellationReason: cancelDate == nil ? nil : reason[i], firstSeen: created, lastSeen: created,
                occurrences: 1)
            try body(record)
        }
    }

    @inline(__always)
    static func bytes(_ c: StringColumn, _ r: Int) -> [UInt8]? {
        guard c.valid[r] else { return nil }
        // offsets has count + 1 entries and offsets[r] <= offsets[r + 1] <= bytes.count.
        return Array(UnsafeRawBufferPointer(rebasing: c.bytes[c.offsets[r]..<c.offsets[r + 1]]))
    }

    /// The bytes of row `r` (empty when null), sharing `last`'s storage when equal to it.
    @inline(__always)
    static func reuse(_ c: StringColumn, _ r: Int, _ last: inout [UInt8]) -> [UInt8] {
        guard c.valid[r] else { return [] }
        // In range as in `bytes`.
        let v = UnsafeRawBufferPointer(rebasing: c.bytes[c.offsets[r]..<c.offsets[r + 1]])
        if !last.elementsEqual(v) { last = Array(v) }
        return last
    }

    static func isXcode(_ c: StringColumn, _ r: Int) -> Bool {
        guard c.valid[r] else { return false }
        return c.withBytes(r) { $0.elementsEqual("Xcode".utf8) }
    }

    static func endsInSandbox(_ c: StringColumn, _ r: Int) -> Bool {
        guard c.valid[r] else { return false }
        return c.withBytes(r) { b in
            let s = Array("Sandbox".utf8)
            return b.count >= s.count && b[(b.count - s.count)...].elementsEqual(s)
        }
    }
}
