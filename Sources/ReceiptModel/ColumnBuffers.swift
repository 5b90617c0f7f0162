/// The raw storage behind `ColumnTable`: per column, manually managed growable buffers, so that appending a value
/// is a capacity compare and a few stores. (Nested Swift arrays paid a uniqueness check per array per value, about
/// three per appended value; the table now checks uniqueness once per row.)
///
/// Each buffer is owned by exactly one `ColumnStorage`, which frees it in `deinit`; the buffers themselves are
/// plain structs with no copy semantics of their own.

// MARK: - Fixed-width columns

/// Values of one INT64, INT32 or BOOLEAN column with one validity byte per row. Null rows hold `T.zeroValue`.
@usableFromInline
struct FixedColumnBuffer<T: BinaryIntegerOrBool> {
    @usableFromInline var values: UnsafeMutablePointer<T>
    @usableFromInline var valid: UnsafeMutablePointer<Bool>
    @usableFromInline var count = 0
    @usableFromInline var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        values = .allocate(capacity: self.capacity)
        valid = .allocate(capacity: self.capacity)
    }

    func free() {
        values.deallocate()
        valid.deallocate()
    }

    @inlinable @inline(__always)
    mutating func append(_ v: T?) {
        if count == capacity { grow() }
        // In bounds: count < capacity once the check above has run.
        values[count] = v ?? T.zeroValue
        valid[count] = v != nil
        count &+= 1  // below capacity, an allocation size: cannot overflow
    }

    @usableFromInline @inline(never)
    mutating func grow() {
        let n = capacity * 2
        let v = UnsafeMutablePointer<T>.allocate(capacity: n)
        let b = UnsafeMutablePointer<Bool>.allocate(capacity: n)
        // The old buffers hold `count` <= capacity < n initialized elements.
        v.initialize(from: values, count: count)
        b.initialize(from: valid, count: count)
        free()
        values = v
        valid = b
        capacity = n
    }

    /// An independent buffer with the same rows (`rows: false`: the same capacity, no rows).
    func copy(rows: Bool) -> Self {
        var c = Self(capacity: capacity)
        if rows {
            // c.capacity == capacity >= count.
            c.values.initialize(from: values, count: count)
            c.valid.initialize(from: valid, count: count)
            c.count = count
        }
        return c
    }
}

// MARK: - Strings

/// The values of one string column back to back in `bytes`; row `i` is `bytes[offsets[i]..<offsets[i + 1]]`.
/// Null rows are empty with `valid[i] == false`. `offsets` always has `count + 1` entries written (`offsets[0] == 0`).
@usableFromInline
struct StringColumnBuffer {
    @usableFromInline var bytes: UnsafeMutablePointer<UInt8>
    @usableFromInline var byteCount = 0
    @usableFromInline var byteCapacity: Int
    /// `capacity + 1` entries.
    @usableFromInline var offsets: UnsafeMutablePointer<Int>
    @usableFromInline var valid: UnsafeMutablePointer<Bool>
    @usableFromInline var count = 0
    @usableFromInline var capacity: Int

    init(capacity: Int, byteCapacity: Int) {
        self.capacity = max(capacity, 16)
        self.byteCapacity = max(byteCapacity, 256)
        bytes = .allocate(capacity: self.byteCapacity)
        offsets = .allocate(capacity: self.capacity + 1)
        valid = .allocate(capacity: self.capacity)
        offsets[0] = 0
    }

    func free() {
        bytes.deallocate()
        offsets.deallocate()
        valid.deallocate()
    }

    @inlinable @inline(__always)
    mutating func append(_ v: UnsafeRawBufferPointer) {
        appendPart(v)
        closeValue(valid: true)
    }

    @inlinable @inline(__always)
    mutating func appendNull() { closeValue(valid: false) }

    /// Appends bytes to the value being built (ended by `closeValue`).
    @inlinable @inline(__always)
    mutating func appendPart(_ v: UnsafeRawBufferPointer) {
        let n = v.count
        if byteCapacity &- byteCount < n { growBytes(n) }
        // In bounds: byteCount + n <= byteCapacity after the check above; n > 0 implies a base address.
        if n > 0 { Self.copy(bytes + byteCount, v.baseAddress.unsafelyUnwrapped, n) }
        byteCount &+= n  // <= byteCapacity: cannot overflow
    }

    /// Copies `n > 0` octets. Most values are short (ids, versions, dates): those are copied as two overlapping
    /// words of 8, 4 or 1 octets (or four of 8 up to 32 octets), reading and writing only the `n` octets, without
    /// the call into `memmove`.
    @inlinable @inline(__always)
    static func copy(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafeRawPointer, _ n: Int) {
        let d = UnsafeMutableRawPointer(dst)
        if n >= 8 {
            if n > 32 { return d.copyMemory(from: src, byteCount: n) }
            // Every load and store below lies in 0..<n (n in 8...32).
            let a = src.loadUnaligned(as: UInt64.self)
            let b = src.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
            if n > 16 {
                let c = src.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let e = src.loadUnaligned(fromByteOffset: n &- 16, as: UInt64.self)
                d.storeBytes(of: c, toByteOffset: 8, as: UInt64.self)
                d.storeBytes(of: e, toByteOffset: n &- 16, as: UInt64.self)
            }
            d.storeBytes(of: a, as: UInt64.self)
            d.storeBytes(of: b, toByteOffset: n &- 8, as: UInt64.self)
        } else if n >= 4 {
            let a = src.loadUnaligned(as: UInt32.self)
            let b = src.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
            d.storeBytes(of: a, as: UInt32.self)
            d.storeBytes(of: b, toByteOffset: n &- 4, as: UInt32.self)
        } else {
            // n in 1...3: octets 0, n / 2 and n - 1 cover them all.
            let a = src.load(as: UInt8.self)
            let b = src.load(fromByteOffset: n >> 1, as: UInt8.self)
            let c = src.load(fromByteOffset: n &- 1, as: UInt8.self)
            d.storeBytes(of: a, as: UInt8.self)
            d.storeBytes(of: b, toByteOffset: n >> 1, as: UInt8.self)
            d.storeBytes(of: c, toByteOffset: n &- 1, as: UInt8.self)
        }
    }

    @inlinable @inline(__always)
    mutating func appendPart(byte: UInt8) {
        if byteCount == byteCapacity { growBytes(1) }
        // In bounds: byteCount < byteCapacity after the check above.
        bytes[byteCount] = byte
        byteCount &+= 1
    }

    /// Ends the row: the bytes appended since the previous row are its value (none for a null).
    @inlinable @inline(__always)
    mutating func closeValue(valid ok: Bool) {
        if count == capacity { growRows() }
        // In bounds: count < capacity, and offsets holds capacity + 1 entries.
        if !ok { byteCount = offsets[count] }
        offsets[count &+ 1] = byteCount
        valid[count] = ok
        count &+= 1  // below capacity: cannot overflow
    }

    @usableFromInline @inline(never)
    mutating func growBytes(_ extra: Int) {
        let n = max(byteCapacity * 2, byteCount + extra)
        let b = UnsafeMutablePointer<UInt8>.allocate(capacity: n)
        b.initialize(from: bytes, count: byteCount)  // byteCount <= byteCapacity < n
        bytes.deallocate()
        bytes = b
        byteCapacity = n
    }

    @usableFromInline @inline(never)
    mutating func growRows() {
        let n = capacity * 2
        let o = UnsafeMutablePointer<Int>.allocate(capacity: n + 1)
        let v = UnsafeMutablePointer<Bool>.allocate(capacity: n)
        o.initialize(from: offsets, count: count + 1)  // count + 1 <= capacity + 1 < n + 1
        v.initialize(from: valid, count: count)
        offsets.deallocate()
        valid.deallocate()
        offsets = o
        valid = v
        capacity = n
    }

    /// An independent buffer with the same rows (`rows: false`: the same capacities, no rows).
    func copy(rows: Bool) -> Self {
        var c = Self(capacity: capacity, byteCapacity: byteCapacity)
        if rows {
            // The copy's capacities equal these, which bound count and byteCount.
            c.bytes.initialize(from: bytes, count: byteCount)
            c.offsets.initialize(from: offsets, count: count + 1)
            c.valid.initialize(from: valid, count: count)
            c.count = count
            c.byteCount = byteCount
        }
        return c
    }
}

// MARK: - One table's buffers

/// Every column buffer of one table, grouped by kind in slot order. Shared between copies of a `ColumnTable` until
/// one of them mutates (copy on write), so an instance that more than one table holds is never written.
@usableFromInline
final class ColumnStorage: @unchecked Sendable {
    @usableFromInline let strings: UnsafeMutablePointer<StringColumnBuffer>
    @usableFromInline let int64s: UnsafeMutablePointer<FixedColumnBuffer<Int64>>
    @usableFromInline let int32s: UnsafeMutablePointer<FixedColumnBuffer<Int32>>
    @usableFromInline let bools: UnsafeMutablePointer<FixedColumnBuffer<Bool>>
    @usableFromInline let stringCount: Int
    @usableFromInline let int64Count: Int
    @usableFromInline let int32Count: Int
    @usableFromInline let boolCount: Int

    /// Empty buffers for `counts` columns of each kind (strings, int64s, int32s, bools).
    init(counts: [Int]) {
        stringCount = counts[0]
        int64Count = counts[1]
        int32Count = counts[2]
        boolCount = counts[3]
        strings = .allocate(capacity: stringCount)
        int64s = .allocate(capacity: int64Count)
        int32s = .allocate(capacity: int32Count)
        bools = .allocate(capacity: boolCount)
        for i in 0..<stringCount { (strings + i).initialize(to: StringColumnBuffer(capacity: 0, byteCapacity: 0)) }
        for i in 0..<int64Count { (int64s + i).initialize(to: FixedColumnBuffer(capacity: 0)) }
        for i in 0..<int32Count { (int32s + i).initialize(to: FixedColumnBuffer(capacity: 0)) }
        for i in 0..<boolCount { (bools + i).initialize(to: FixedColumnBuffer(capacity: 0)) }
    }

    /// A storage whose buffers are independent copies of `other`'s (with or without their rows).
    private init(copying other: ColumnStorage, rows: Bool) {
        stringCount = other.stringCount
        int64Count = other.int64Count
        int32Count = other.int32Count
        boolCount = other.boolCount
        strings = .allocate(capacity: stringCount)
        int64s = .allocate(capacity: int64Count)
        int32s = .allocate(capacity: int32Count)
        bools = .allocate(capacity: boolCount)
        for i in 0..<stringCount { (strings + i).initialize(to: other.strings[i].copy(rows: rows)) }
        for i in 0..<int64Count { (int64s + i).initialize(to: other.int64s[i].copy(rows: rows)) }
        for i in 0..<int32Count { (int32s + i).initialize(to: other.int32s[i].copy(rows: rows)) }
        for i in 0..<boolCount { (bools + i).initialize(to: other.bools[i].copy(rows: rows)) }
    }

    deinit {
        for i in 0..<stringCount { strings[i].free() }
        for i in 0..<int64Count { int64s[i].free() }
        for i in 0..<int32Count { int32s[i].free() }
        for i in 0..<boolCount { bools[i].free() }
        strings.deallocate()
        int64s.deallocate()
        int32s.deallocate()
        bools.deallocate()
    }

    @usableFromInline
    func copy(rows: Bool) -> ColumnStorage { ColumnStorage(copying: self, rows: rows) }

    /// Drops every row, keeping the capacity.
    @usableFromInline
    func removeAll() {
        for i in 0..<stringCount {
            strings[i].count = 0
            strings[i].byteCount = 0
        }
        for i in 0..<int64Count { int64s[i].count = 0 }
        for i in 0..<int32Count { int32s[i].count = 0 }
        for i in 0..<boolCount { bools[i].count = 0 }
    }
}
