import ReceiptModel

/// The key a renewal info is matched by: environment and original_transaction_id (a renewal info names no
/// bundle; docs/history.md, "Renewal infos (JWS)").
struct RenewalKey: Hashable, Sendable {
    var environment: UInt8
    var originalTransactionID: [UInt8]

    /// Hashes the byte string as one block (the synthesized hash feeds the hasher one byte at a time).
    func hash(into h: inout Hasher) {
        h.combine(environment)
        originalTransactionID.withUnsafeBytes { h.combine(bytes: $0) }
    }
}

/// The newest counting renewal info of one key: the fields that refine a subscription's row and state.
///
/// `merge` keeps the newer of two by the total recency order (signed date, input, line, jws_index), so the result
/// does not depend on the order renewal infos meet in.
struct RenewalRecord: Sendable {
    var key: RenewalKey
    /// Recency of the renewal info: its signed date, input, line and jws_index.
    var newest: Recency
    var signedDate: Int64?
    var autoRenewStatus: Int32?
    var autoRenewProductID: [UInt8]?
    var expirationIntent: Int32?
    var isInBillingRetryPeriod: Bool?
    var gracePeriodExpiresDate: Int64?

    mutating func merge(_ o: RenewalRecord) {
        if newest < o.newest { self = o }
    }

    var estimatedBytes: Int {
        MemoryLayout<RenewalRecord>.stride + 3 * 48 + key.originalTransactionID.count
            + (autoRenewProductID?.count ?? 0)
    }

    func partition(_ count: Int, seed: UInt64) -> Int {
        Int(stableHash([key.environment], key.originalTransactionID, seed: seed) % UInt64(count))
    }

    /// Environment, then original_transaction_id, bytewise.
    static func precedes(_ a: RenewalRecord, _ b: RenewalRecord) -> Bool {
        if a.key.environment != b.key.environment { return a.key.environment < b.key.environment }
        return compareBytes(a.key.originalTransactionID, b.key.originalTransactionID) < 0
    }

    func encode(into w: inout SpillWriter) {
        w.u8(key.environment)
        w.text(key.originalTransactionID)
        newest.encode(into: &w)
        w.i64(signedDate)
        w.i32(autoRenewStatus)
        w.text(autoRenewProductID)
        w.i32(expirationIntent)
        w.bool(isInBillingRetryPeriod)
        w.i64(gracePeriodExpiresDate)
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> RenewalRecord {
        let key = RenewalKey(environment: try r.u8(), originalTransactionID: try r.text())
        let newest = try Recency.decode(&r)
        return RenewalRecord(
            key: key, newest: newest, signedDate: try r.optionalI64(), autoRenewStatus: try r.optionalI32(),
            autoRenewProductID: try r.optionalText(), expirationIntent: try r.optionalI32(),
            isInBillingRetryPeriod: try r.optionalBool(), gracePeriodExpiresDate: try r.optionalI64())
    }

    /// The renewal infos of one written batch that count: its `renewals` rows (valid JWS renewal infos) whose
    /// environment is not StoreKit testing (`Xcode`, `LocalTesting`) and whose original_transaction_id is not null, `input` being the batch's
    /// command-line index.
    static func extract(_ batch: ColumnBatch, input: Int, _ body: (RenewalRecord) throws(HistoryError) -> Void)
        throws(HistoryError)
    {
        typealias C = RenewalsColumns
        let t = batch.renewals
        let environment = t.strings[C.environment]
        let otid = t.strings[C.originalTransactionID]
        let product = t.strings[C.autoRenewProductID]
        let line = t.int64s[C.line]
        let signed = t.int64s[C.signedDate]
        let grace = t.int64s[C.gracePeriodExpiresDate]
        let index = t.int32s[C.jwsIndex]
        let status = t.int32s[C.autoRenewStatus]
        let intent = t.int32s[C.expirationIntent]
        let retry = t.bools[C.isInBillingRetryPeriod]
        for i in 0..<t.rowCount where otid.valid[i] {
            guard let env = OccurrenceExtractor.environment(environment, i) else { continue }
            let recency = Recency(
                created: signed[i] ?? Int64.min, input: Int64(input), line: line[i] ?? 0,
                entry: Int64(index[i] ?? 0))
            try body(
                RenewalRecord(
                    key: RenewalKey(environment: env.rawValue, originalTransactionID: bytes(otid, i)),
                    newest: recency, signedDate: signed[i], autoRenewStatus: status[i],
                    autoRenewProductID: product.valid[i] ? bytes(product, i) : nil,
                    expirationIntent: intent[i], isInBillingRetryPeriod: retry[i],
                    gracePeriodExpiresDate: grace[i]))
        }
        withExtendedLifetime(t) {}
    }

    private static func bytes(_ c: StringColumn, _ i: Int) -> [UInt8] {
        c.withBytes(i) { Array($0) }
    }
}
