/// The value types a `PrimitiveColumn` can hold.
public protocol BinaryIntegerOrBool: Sendable, BitwiseCopyable { static var zeroValue: Self { get } }
extension Int64: BinaryIntegerOrBool { public static var zeroValue: Int64 { 0 } }
extension Int32: BinaryIntegerOrBool { public static var zeroValue: Int32 { 0 } }
extension Bool: BinaryIntegerOrBool { public static var zeroValue: Bool { false } }

/// Rows of one table in columnar form; sinks render pages and lines straight from the column buffers.
///
/// A value type (copy on write): copies share their buffers until one of them is mutated. Workers fill a table
/// row by row through `appendRow`, which checks uniqueness once per row and then writes each value into
/// preallocated buffers; readers take read-only column views (`strings[slot]`, `int64s[slot]`, ...).
public struct ColumnTable: Sendable {
    public let schema: TableSchema
    @usableFromInline var storage: ColumnStorage
    /// Rows appended so far; `appendRow` counts them, callers of the per-column `append` methods count themselves.
    public var rowCount: Int = 0

    public init(schema: TableSchema) {
        self.schema = schema
        storage = ColumnStorage(counts: schema.kindCounts)
    }

    /// Appends one row: `body` must append exactly one value to every column of the schema.
    @inlinable
    public mutating func appendRow<E: Error>(_ body: (inout ColumnRowWriter) throws(E) -> Void) throws(E) {
        makeUnique()
        var w = ColumnRowWriter(storage)
        try body(&w)
        rowCount += 1
        assert(isConsistent, "a row of \(schema.name) did not fill every column once")
    }

    @inlinable
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy(rows: true) }
    }

    /// Drops every row and keeps the buffers' capacity (unless they are shared with a copy).
    public mutating func removeAll() {
        if isKnownUniquelyReferenced(&storage) {
            storage.removeAll()
        } else {
            storage = storage.copy(rows: false)
        }
        rowCount = 0
    }

    // MARK: - Appending one column at a time (tools and tests; the pipeline uses appendRow)

    public mutating func append(string slot: Int, _ v: String?) {
        makeUnique()
        var w = ColumnRowWriter(storage)
        w.string(slot, v)
    }

    public mutating func append(string slot: Int, bytes v: UnsafeRawBufferPointer?) {
        makeUnique()
        var w = ColumnRowWriter(storage)
        w.string(slot, v)
    }

    public mutating func append(int64 slot: Int, _ v: Int64?) {
        makeUnique()
        var w = ColumnRowWriter(storage)
        w.int64(slot, v)
    }

    public mutating func append(int32 slot: Int, _ v: Int32?) {
        makeUnique()
        var w = ColumnRowWriter(storage)
        w.int32(slot, v)
    }

    public mutating func append(bool slot: Int, _ v: Bool?) {
        makeUnique()
        var w = ColumnRowWriter(storage)
        w.bool(slot, v)
    }

    // MARK: - Reading

    /// Read-only views of the string columns, by slot.
    public var strings: StringColumns { StringColumns(storage) }
    /// INT64 and TIMESTAMP(MILLIS) columns.
    public var int64s: PrimitiveColumns<Int64> { PrimitiveColumns(storage, storage.int64s, storage.int64Count) }
    public var int32s: PrimitiveColumns<Int32> { PrimitiveColumns(storage, storage.int32s, storage.int32Count) }
    public var bools: PrimitiveColumns<Bool> { PrimitiveColumns(storage, storage.bools, storage.boolCount) }

    /// Debug check that every column holds `rowCount` rows.
    public var isConsistent: Bool {
        let s = storage
        for i in 0..<s.stringCount where s.strings[i].count != rowCount { return false }
        for i in 0..<s.int64Count where s.int64s[i].count != rowCount { return false }
        for i in 0..<s.int32Count where s.int32s[i].count != rowCount { return false }
        for i in 0..<s.boolCount where s.bools[i].count != rowCount { return false }
        return true
    }
}

/// Appends the values of one row (see `ColumnTable.appendRow`). It points into the table's storage without
/// owning it, so it is not copyable: it cannot leave the closure it is lent to.
public struct ColumnRowWriter: ~Copyable {
    @usableFromInline unowned(unsafe) let storage: ColumnStorage

    @usableFromInline init(_ storage: ColumnStorage) { self.storage = storage }

    @inlinable @inline(__always)
    public mutating func string(_ slot: Int, _ v: UnsafeRawBufferPointer) {
        precondition(slot >= 0 && slot < storage.stringCount, "no string column \(slot)")
        storage.strings[slot].append(v)  // slot checked above
    }

    @inlinable @inline(__always)
    public mutating func string(_ slot: Int, _ v: UnsafeRawBufferPointer?) {
        if let v { string(slot, v) } else { null(string: slot) }
    }

    @inlinable
    public mutating func string(_ slot: Int, _ v: String?) {
        guard var v else { return null(string: slot) }
        v.withUTF8 { string(slot, UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    public mutating func string(_ slot: Int, _ v: StaticString) {
        string(slot, UnsafeRawBufferPointer(start: v.utf8Start, count: v.utf8CodeUnitCount))
    }

    /// Builds a string value from parts (`body` appends them), for text composed at the row.
    @inlinable
    public mutating func string(_ slot: Int, parts body: (inout StringValueBuilder) -> Void) {
        precondition(slot >= 0 && slot < storage.stringCount, "no string column \(slot)")
        var b = StringValueBuilder(storage.strings + slot)  // slot checked above
        body(&b)
        storage.strings[slot].closeValue(valid: true)
    }

    @inlinable @inline(__always)
    public mutating func null(string slot: Int) {
        precondition(slot >= 0 && slot < storage.stringCount, "no string column \(slot)")
        storage.strings[slot].appendNull()  // slot checked above
    }

    @inlinable @inline(__always)
    public mutating func int64(_ slot: Int, _ v: Int64?) {
        precondition(slot >= 0 && slot < storage.int64Count, "no int64 column \(slot)")
        storage.int64s[slot].append(v)  // slot checked above
    }

    @inlinable @inline(__always)
    public mutating func int32(_ slot: Int, _ v: Int32?) {
        precondition(slot >= 0 && slot < storage.int32Count, "no int32 column \(slot)")
        storage.int32s[slot].append(v)  // slot checked above
    }

    @inlinable @inline(__always)
    public mutating func bool(_ slot: Int, _ v: Bool?) {
        precondition(slot >= 0 && slot < storage.boolCount, "no bool column \(slot)")
        storage.bools[slot].append(v)  // slot checked above
    }
}

/// Appends the parts of one string value (see `ColumnRowWriter.string(_:parts:)`); not copyable, like the
/// writer it comes from.
public struct StringValueBuilder: ~Copyable {
    @usableFromInline let column: UnsafeMutablePointer<StringColumnBuffer>

    @usableFromInline init(_ column: UnsafeMutablePointer<StringColumnBuffer>) { self.column = column }

    @inlinable public mutating func append(_ part: UnsafeRawBufferPointer) { column.pointee.appendPart(part) }
    @inlinable public mutating func append(_ byte: UInt8) { column.pointee.appendPart(byte: byte) }
    @inlinable public mutating func append(_ part: StaticString) {
        column.pointee.appendPart(UnsafeRawBufferPointer(start: part.utf8Start, count: part.utf8CodeUnitCount))
    }
}

// MARK: - Read-only views
//
// A view keeps the table's buffers alive, and a later append to the table copies them first (copy on write), so
// a view's pointers stay valid for as long as the view.

/// The string columns of a table, by slot.
public struct StringColumns {
    @usableFromInline let storage: ColumnStorage

    @usableFromInline init(_ storage: ColumnStorage) { self.storage = storage }

    public var count: Int { storage.stringCount }

    @inlinable public subscript(slot: Int) -> StringColumn {
        precondition(slot >= 0 && slot < storage.stringCount, "no string column \(slot)")
        return StringColumn(storage, storage.strings[slot])  // slot checked above
    }
}

/// The fixed-width columns of one kind of a table, by slot.
public struct PrimitiveColumns<T: BinaryIntegerOrBool> {
    @usableFromInline let storage: ColumnStorage
    @usableFromInline let buffers: UnsafeMutablePointer<FixedColumnBuffer<T>>
    public let count: Int

    @usableFromInline init(_ storage: ColumnStorage, _ buffers: UnsafeMutablePointer<FixedColumnBuffer<T>>, _ n: Int) {
        self.storage = storage
        self.buffers = buffers
        count = n
    }

    @inlinable public subscript(slot: Int) -> PrimitiveColumn<T> {
        precondition(slot >= 0 && slot < count, "no column \(slot)")
        return PrimitiveColumn(storage, buffers[slot])  // slot checked above
    }
}

/// A string column: all values back to back in `bytes`, row `i` at `offsets[i]..<offsets[i + 1]`.
public struct StringColumn {
    @usableFromInline let owner: ColumnStorage
    public let bytes: UnsafeRawBufferPointer
    /// `count + 1` entries, the first 0.
    public let offsets: UnsafeBufferPointer<Int>
    public let valid: UnsafeBufferPointer<Bool>

    @usableFromInline init(_ owner: ColumnStorage, _ b: StringColumnBuffer) {
        self.owner = owner
        bytes = UnsafeRawBufferPointer(start: b.bytes, count: b.byteCount)
        offsets = UnsafeBufferPointer(start: b.offsets, count: b.count + 1)
        valid = UnsafeBufferPointer(start: b.valid, count: b.count)
    }

    public var count: Int { valid.count }

    /// The bytes of row `i` (empty for null rows).
    public func withBytes<R>(_ row: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition(row >= 0 && row < count, "no row \(row)")
        // offsets[row] <= offsets[row + 1] <= bytes.count: the buffer only ever appends whole values.
        let value = UnsafeRawBufferPointer(rebasing: bytes[offsets[row]..<offsets[row + 1]])
        return try withExtendedLifetime(owner) { try body(value) }
    }

    public subscript(row: Int) -> String? {
        guard valid[row] else { return nil }
        return withBytes(row) { String(decoding: $0, as: UTF8.self) }
    }
}

/// A fixed-width column; null rows hold a zero value.
public struct PrimitiveColumn<T: BinaryIntegerOrBool> {
    @usableFromInline let owner: ColumnStorage
    public let values: UnsafeBufferPointer<T>
    public let valid: UnsafeBufferPointer<Bool>

    @usableFromInline init(_ owner: ColumnStorage, _ b: FixedColumnBuffer<T>) {
        self.owner = owner
        values = UnsafeBufferPointer(start: b.values, count: b.count)
        valid = UnsafeBufferPointer(start: b.valid, count: b.count)
    }

    public var count: Int { valid.count }

    public subscript(row: Int) -> T? { valid[row] ? values[row] : nil }
}

/// The output of one worker for one input batch: both tables, in input order, plus the verifyReceipt-shaped
/// NDJSON lines when that format was asked for.
public struct ColumnBatch: Sendable {
    /// Position of the input batch this came from; the writer emits batches in this order.
    public var sequence: Int
    public var receipts: ColumnTable
    public var transactions: ColumnTable
    /// One row per valid JWS renewal info (docs/jws.md); empty for receipts.
    public var renewals: ColumnTable
    /// What the history stage takes from the batch, made beside the rows from the same values.
    public var history = HistoryFeed()
    /// When `--format ndjson`: one rendered JSON object per receipts row, each followed by `\n`.
    public var ndjson: [UInt8] = []
    /// Input bytes this batch covered (for progress and the summary).
    public var inputBytes: Int = 0

    public init(sequence: Int) {
        self.sequence = sequence
        receipts = ColumnTable(schema: .receipts)
        transactions = ColumnTable(schema: .transactions)
        renewals = ColumnTable(schema: .renewals)
    }
}
