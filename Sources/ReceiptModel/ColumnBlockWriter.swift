// MARK: - Appending several rows column by column

extension FixedColumnBuffer {
    /// Makes room for `extra` more rows.
    @inlinable @inline(__always)
    mutating func reserve(_ extra: Int) {
        while capacity &- count < extra { grow() }
    }
}

extension StringColumnBuffer {
    /// Makes room for `extra` more rows (their bytes are checked value by value).
    @inlinable @inline(__always)
    mutating func reserveRows(_ extra: Int) {
        while capacity &- count < extra { growRows() }
    }
}

extension ColumnTable {
    /// Appends `rows` rows column by column: `body` must fill every column of the schema for all of them, once,
    /// through the block writer. One uniqueness check and one capacity check per column for the whole block,
    /// where `appendRow` pays them per row and value.
    @inlinable
    public mutating func appendRows<E: Error>(
        _ rows: Int, _ body: (inout ColumnBlockWriter) throws(E) -> Void
    ) throws(E) {
        precondition(rows >= 0, "a negative number of rows")
        makeUnique()
        var w = ColumnBlockWriter(storage, rows: rows)
        try body(&w)
        rowCount += rows
        assert(isConsistent, "a block of \(schema.name) did not fill every column once")
    }
}

/// Fills `rows` new rows of a table one column at a time (see `ColumnTable.appendRows`); row `i` of the block gets
/// the value the closure returns for `i`. Not copyable, like `ColumnRowWriter`.
public struct ColumnBlockWriter: ~Copyable {
    @usableFromInline unowned(unsafe) let storage: ColumnStorage
    public let rows: Int

    @usableFromInline init(_ storage: ColumnStorage, rows: Int) {
        self.storage = storage
        self.rows = rows
    }

    @inlinable @inline(__always)
    public mutating func string(_ slot: Int, _ value: (Int) -> UnsafeRawBufferPointer?) {
        precondition(slot >= 0 && slot < storage.stringCount, "no string column \(slot)")
        let b = storage.strings + slot  // slot checked above
        b.pointee.reserveRows(rows)
        for i in 0..<rows {
            if let v = value(i) { b.pointee.append(v) } else { b.pointee.appendNull() }
        }
    }

    @inlinable @inline(__always)
    public mutating func int64(_ slot: Int, _ value: (Int) -> Int64?) {
        precondition(slot >= 0 && slot < storage.int64Count, "no int64 column \(slot)")
        Self.fill(storage.int64s + slot, rows, value)  // slot checked above
    }

    @inlinable @inline(__always)
    public mutating func int32(_ slot: Int, _ value: (Int) -> Int32?) {
        precondition(slot >= 0 && slot < storage.int32Count, "no int32 column \(slot)")
        Self.fill(storage.int32s + slot, rows, value)  // slot checked above
    }

    @inlinable @inline(__always)
    public mutating func bool(_ slot: Int, _ value: (Int) -> Bool?) {
        precondition(slot >= 0 && slot < storage.boolCount, "no bool column \(slot)")
        Self.fill(storage.bools + slot, rows, value)  // slot checked above
    }

    @inlinable @inline(__always)
    static func fill<T>(_ b: UnsafeMutablePointer<FixedColumnBuffer<T>>, _ rows: Int, _ value: (Int) -> T?) {
        b.pointee.reserve(rows)
        let values = b.pointee.values
        let valid = b.pointee.valid
        let start = b.pointee.count
        for i in 0..<rows {
            // In bounds: start + rows <= capacity after `reserve`.
            let v = value(i)
            values[start &+ i] = v ?? T.zeroValue
            valid[start &+ i] = v != nil
        }
        b.pointee.count = start &+ rows
    }
}
