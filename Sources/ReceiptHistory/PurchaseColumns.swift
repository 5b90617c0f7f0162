import ReceiptModel

/// What follows from `PurchaseRecord.visit`, the one declaration of the `purchases` row: the table's schema, the
/// spill encoding of a record and the writing of its row. Each is a visitor over the same fields, so that a new
/// field needs nothing here.
extension TableSchema {
    /// `purchases`: one row per (environment, bundle_id, transaction_id) over every contributing receipt
    /// (docs/history.md).
    public static let purchases: TableSchema = {
        var v = PurchaseSchemaVisitor()
        var r = PurchaseRecord(
            facts: PurchaseFacts(), text: [], newest: Recency(created: 0, input: 0, line: 0, entry: 0),
            cancelledAt: nil, firstSeen: nil, lastSeen: nil, occurrences: 0)
        r.visit(&v)
        return TableSchema(name: "purchases", v.columns)
    }()
}

/// Collects the columns' names, kinds and nullability.
private struct PurchaseSchemaVisitor: PurchaseRecordVisitor {
    var columns: [(String, ColumnKind, Bool)] = []

    mutating func add(_ name: StaticString, _ kind: ColumnKind, _ nullable: Bool) {
        columns.append(("\(name)", kind, nullable))
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan) { add(name, .string, false) }
    mutating func text(_ name: StaticString, _ v: inout TextSpan?) { add(name, .string, true) }
    mutating func int32(_ name: StaticString, _ v: inout Int32?) { add(name, .int32, true) }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { add(name, .int64, true) }
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { add(name, .timestampMillis, true) }
    mutating func bool(_ name: StaticString, _ v: inout Bool?) { add(name, .bool, true) }
    mutating func environment(_ name: StaticString, _ v: inout HistoryEnvironment) { add(name, .string, false) }
    mutating func count(_ name: StaticString, _ v: inout Int64) { add(name, .int64, false) }
    mutating func source(_ name: StaticString, _ v: inout Int64) { add(name, .string, false) }
    mutating func state(_ v: inout Int64) {}
    mutating func state(_ v: inout Recency?) {}
}

/// Appends a record's row to a table of the `purchases` schema, slot by slot in schema order (slots are given
/// per kind in column order, as `TableSchema` assigns them).
struct PurchaseRowVisitor: PurchaseRecordVisitor {
    var table: ColumnTable
    let text: [UInt8]
    let inputs: [String]
    private var strings = 0
    private var int64s = 0
    private var int32s = 0
    private var bools = 0

    init(table: consuming ColumnTable, text: [UInt8], inputs: [String]) {
        self.table = table
        self.text = text
        self.inputs = inputs
    }

    private mutating func string(_ bytes: UnsafeRawBufferPointer?) {
        table.append(string: strings, bytes: bytes)
        strings += 1
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan) {
        let s = v
        text.withUnsafeBytes { string($0.span(s)) }
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan?) {
        guard let s = v else { return string(nil) }
        text.withUnsafeBytes { string($0.span(s)) }
    }

    mutating func int32(_ name: StaticString, _ v: inout Int32?) {
        table.append(int32: int32s, v)
        int32s += 1
    }

    mutating func int64(_ name: StaticString, _ v: inout Int64?) {
        table.append(int64: int64s, v)
        int64s += 1
    }

    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { int64(name, &v) }

    mutating func bool(_ name: StaticString, _ v: inout Bool?) {
        table.append(bool: bools, v)
        bools += 1
    }

    mutating func environment(_ name: StaticString, _ v: inout HistoryEnvironment) {
        table.append(string: strings, v.name)
        strings += 1
    }

    mutating func count(_ name: StaticString, _ v: inout Int64) {
        table.append(int64: int64s, v)
        int64s += 1
    }

    mutating func source(_ name: StaticString, _ v: inout Int64) {
        table.append(string: strings, v >= 0 && v < inputs.count ? inputs[Int(v)] : String(v))
        strings += 1
    }

    mutating func state(_ v: inout Int64) {}
    mutating func state(_ v: inout Recency?) {}
}

/// Writes a record's fields in visit order, each byte string as its bytes (length first).
struct PurchaseEncoder: PurchaseRecordVisitor {
    var w: SpillWriter
    let text: [UInt8]

    mutating func text(_ name: StaticString, _ v: inout TextSpan) {
        let s = v
        text.withUnsafeBytes { t in
            let b = t.span(s)
            w.i32(Int32(b.count))
            w.bytes.append(contentsOf: b)
        }
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan?) {
        guard v != nil else { return w.u8(0) }
        w.u8(1)
        text(name, &v!)
    }

    mutating func int32(_ name: StaticString, _ v: inout Int32?) { w.i32(v) }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { w.i64(v) }
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { w.i64(v) }
    mutating func bool(_ name: StaticString, _ v: inout Bool?) { w.bool(v) }
    mutating func environment(_ name: StaticString, _ v: inout HistoryEnvironment) { w.u8(v.rawValue) }
    mutating func count(_ name: StaticString, _ v: inout Int64) { w.i64(v) }
    mutating func source(_ name: StaticString, _ v: inout Int64) { w.i64(v) }
    mutating func state(_ v: inout Int64) { w.i64(v) }

    mutating func state(_ v: inout Recency?) {
        guard let r = v else { return w.u8(0) }
        w.u8(1)
        r.encode(into: &w)
    }
}

/// Reads what `PurchaseEncoder` wrote, gathering the byte strings into a new text. The first failure is kept
/// (later reads return defaults) and thrown by `PurchaseRecord.decode`.
struct PurchaseDecoder: PurchaseRecordVisitor {
    var r: SpillReader
    var text: [UInt8] = []
    var failure: HistoryError? = nil

    init(_ r: SpillReader) { self.r = r }

    private mutating func read<T>(_ fallback: T, _ body: (inout SpillReader) throws(HistoryError) -> T) -> T {
        guard failure == nil else { return fallback }
        do throws(HistoryError) {
            return try body(&r)
        } catch {
            failure = error
            return fallback
        }
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan) {
        let bytes = read([]) { r throws(HistoryError) in try r.text() }
        v = TextSpan(offset: Int32(text.count), count: Int32(bytes.count))
        text.append(contentsOf: bytes)
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan?) {
        guard read(0, { r throws(HistoryError) in try r.u8() }) != 0 else {
            v = nil
            return
        }
        var s = TextSpan.empty
        text(name, &s)
        v = s
    }

    mutating func int32(_ name: StaticString, _ v: inout Int32?) {
        v = read(nil) { r throws(HistoryError) in try r.optionalI32() }
    }

    mutating func int64(_ name: StaticString, _ v: inout Int64?) {
        v = read(nil) { r throws(HistoryError) in try r.optionalI64() }
    }

    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { int64(name, &v) }

    mutating func bool(_ name: StaticString, _ v: inout Bool?) {
        v = read(nil) { r throws(HistoryError) in try r.optionalBool() }
    }

    mutating func environment(_ name: StaticString, _ v: inout HistoryEnvironment) {
        let raw = read(0) { r throws(HistoryError) in try r.u8() }
        guard let e = HistoryEnvironment(rawValue: raw) else {
            if failure == nil { failure = HistoryError(.spillDamaged, detail: "an unknown environment") }
            return
        }
        v = e
    }

    mutating func count(_ name: StaticString, _ v: inout Int64) { state(&v) }
    mutating func source(_ name: StaticString, _ v: inout Int64) { state(&v) }
    mutating func state(_ v: inout Int64) { v = read(0) { r throws(HistoryError) in try r.i64() } }

    mutating func state(_ v: inout Recency?) {
        v = read(nil) { r throws(HistoryError) in try r.u8() == 0 ? nil : try Recency.decode(&r) }
    }
}

extension PurchaseRecord {
    func encode(into w: inout SpillWriter) {
        var e = PurchaseEncoder(w: w, text: text)
        w = SpillWriter()
        var r = self
        r.visit(&e)
        w = e.w
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> PurchaseRecord {
        var record = PurchaseRecord(
            facts: PurchaseFacts(), text: [], newest: Recency(created: 0, input: 0, line: 0, entry: 0),
            cancelledAt: nil, firstSeen: nil, lastSeen: nil, occurrences: 0)
        var d = PurchaseDecoder(r)
        record.visit(&d)
        r = d.r
        if let failure = d.failure { throw failure }
        record.text = d.text
        return record
    }
}
