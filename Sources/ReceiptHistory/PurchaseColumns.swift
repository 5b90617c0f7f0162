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

/// Writes a record's fields in visit order, compactly: byte strings as a varint length and their bytes, numbers
/// as zigzag varints, a null as a single 0 (a present value is stored plus one), and each timestamp as the
/// difference from the record's previous one (a purchase's dates lie close together, so most take two to four
/// bytes instead of nine).
struct PurchaseEncoder: PurchaseRecordVisitor {
    var w: SpillWriter
    let text: [UInt8]
    /// The previous timestamp written (0 before the first).
    private var base: Int64 = 0

    init(w: SpillWriter, text: [UInt8]) {
        self.w = w
        self.text = text
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan) {
        let s = v
        text.withUnsafeBytes { w.bytes($0.span(s)) }
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan?) {
        guard let s = v else { return w.u8(0) }
        w.varint(UInt64(s.count) + 1)
        text.withUnsafeBytes { w.bytes.append(contentsOf: $0.span(s)) }
    }

    mutating func int32(_ name: StaticString, _ v: inout Int32?) { w.optional(v.map { Int64($0) }) }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { w.optional(v) }

    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { w.timestamp(v, after: &base) }

    mutating func bool(_ name: StaticString, _ v: inout Bool?) { w.bool(v) }
    mutating func environment(_ name: StaticString, _ v: inout HistoryEnvironment) { w.u8(v.rawValue) }
    mutating func count(_ name: StaticString, _ v: inout Int64) { w.zigzag(v) }
    mutating func source(_ name: StaticString, _ v: inout Int64) { w.zigzag(v) }
    mutating func state(_ v: inout Int64) { w.zigzag(v) }
    mutating func stateTime(_ v: inout Int64) { w.zigzag(v &- base) }

    mutating func state(_ v: inout Recency?) {
        guard let r = v else { return w.u8(0) }
        w.u8(1)
        w.zigzag(r.created &- base)
        w.zigzag(r.input)
        w.zigzag(r.line)
        w.zigzag(r.entry)
    }
}

/// Reads what `PurchaseEncoder` wrote, gathering the byte strings into `text` (emptied first, its storage
/// kept). The first failure is kept (later reads return defaults; `failed` is checked per field, the error only
/// at the end) and thrown by `PurchaseRecord.decode`.
struct PurchaseDecoder: PurchaseRecordVisitor {
    var r: SpillReader
    var text: [UInt8]
    private(set) var failure: HistoryError? = nil
    private var failed = false
    private var base: Int64 = 0

    init(_ r: SpillReader, text: consuming [UInt8] = []) {
        self.r = r
        self.text = text
        self.text.removeAll(keepingCapacity: true)
        // The byte strings are at most what is left of the record: one allocation at most.
        self.text.reserveCapacity(r.bytes.count - r.offset)
    }

    private mutating func fail(_ error: HistoryError) {
        if !failed {
            failure = error
            failed = true
        }
    }

    @inline(__always)
    private mutating func read<T>(_ fallback: T, _ body: (inout SpillReader) throws(HistoryError) -> T) -> T {
        guard !failed else { return fallback }
        do throws(HistoryError) {
            return try body(&r)
        } catch {
            fail(error)
            return fallback
        }
    }

    @inline(__always)
    private mutating func bytes(_ count: Int) -> TextSpan {
        guard !failed else { return .empty }
        let at = text.count
        do throws(HistoryError) {
            text.append(contentsOf: try r.bytes(count))
        } catch {
            fail(error)
        }
        return TextSpan(offset: Int32(at), count: Int32(text.count - at))
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan) {
        v = bytes(Int(read(0) { r throws(HistoryError) in try r.varint32() }))
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan?) {
        let n = read(0) { r throws(HistoryError) in try r.varint32() }
        v = n == 0 ? nil : bytes(Int(n) - 1)
    }

    mutating func int32(_ name: StaticString, _ v: inout Int32?) {
        let n = read(nil) { r throws(HistoryError) in try r.optional() }
        guard let n else { return v = nil }
        guard let narrow = Int32(exactly: n) else {
            return fail(HistoryError(.spillDamaged, detail: "a number is out of range"))
        }
        v = narrow
    }

    mutating func int64(_ name: StaticString, _ v: inout Int64?) {
        v = read(nil) { r throws(HistoryError) in try r.optional() }
    }

    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) {
        guard let d = read(nil, { r throws(HistoryError) in try r.optional() }) else { return v = nil }
        base = base &+ d
        v = base
    }

    mutating func bool(_ name: StaticString, _ v: inout Bool?) {
        v = read(nil) { r throws(HistoryError) in try r.optionalBool() }
    }

    mutating func environment(_ name: StaticString, _ v: inout HistoryEnvironment) {
        let raw = read(0) { r throws(HistoryError) in try r.u8() }
        guard let e = HistoryEnvironment(rawValue: raw) else {
            return fail(HistoryError(.spillDamaged, detail: "an unknown environment"))
        }
        v = e
    }

    mutating func count(_ name: StaticString, _ v: inout Int64) { state(&v) }
    mutating func source(_ name: StaticString, _ v: inout Int64) { state(&v) }
    mutating func state(_ v: inout Int64) { v = read(0) { r throws(HistoryError) in try r.zigzag() } }
    mutating func stateTime(_ v: inout Int64) { v = base &+ read(0) { r throws(HistoryError) in try r.zigzag() } }

    mutating func state(_ v: inout Recency?) {
        let base = self.base
        v = read(nil) { r throws(HistoryError) in
            guard try r.u8() != 0 else { return nil }
            return Recency(
                created: base &+ (try r.zigzag()), input: try r.zigzag(), line: try r.zigzag(), entry: try r.zigzag())
        }
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
        try decode(&r, into: &record)
        return record
    }

    /// Decodes over `record`, reusing its text's storage when no one else holds it.
    static func decode(_ r: inout SpillReader, into record: inout PurchaseRecord) throws(HistoryError) {
        // The text moves into the decoder (held once, its storage is reused); every field is visited, so every
        // field is overwritten.
        var text: [UInt8] = []
        swap(&text, &record.text)
        var d = PurchaseDecoder(r, text: consume text)
        record.visit(&d)
        r = d.r
        record.text = d.text
        if let failure = d.failure {
            record.facts = PurchaseFacts()
            throw failure
        }
    }
}
