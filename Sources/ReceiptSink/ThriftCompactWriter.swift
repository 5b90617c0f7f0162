/// An encoder for the Thrift compact protocol, limited to what Parquet's footer and page headers use.
///
/// Fields must be written in ascending id order within a struct (the short field header stores the id delta).
/// The writer keeps a stack of "last field id" per open struct; `bytes` keeps its capacity across `reset()`, so a
/// reused writer does not allocate once warm.
struct ThriftCompactWriter {
    /// Compact protocol type nibbles.
    enum FieldType: UInt8 {
        case boolTrue = 1
        case boolFalse = 2
        case i8 = 3
        case i16 = 4
        case i32 = 5
        case i64 = 6
        case double = 7
        case binary = 8
        case list = 9
        case set = 10
        case map = 11
        case structure = 12
    }

    var bytes: [UInt8] = []
    private var lastID: Int16 = 0
    private var stack: [Int16] = []

    init() {
        stack.reserveCapacity(16)
    }

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        lastID = 0
        stack.removeAll(keepingCapacity: true)
    }

    // MARK: - Primitives

    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    mutating func zigzag(_ v: Int64) {
        // Arithmetic shift spreads the sign bit; the left shift wraps by design of the encoding.
        varint(UInt64(bitPattern: (v &<< 1) ^ (v >> 63)))
    }

    mutating func fieldHeader(_ id: Int16, _ type: FieldType) {
        let delta = Int(id) - Int(lastID)
        if delta > 0 && delta <= 15 {
            bytes.append(UInt8(delta << 4) | type.rawValue)
        } else {
            bytes.append(type.rawValue)
            zigzag(Int64(id))
        }
        lastID = id
    }

    // MARK: - Fields

    mutating func i8(_ id: Int16, _ v: Int8) {
        fieldHeader(id, .i8)
        bytes.append(UInt8(bitPattern: v))  // i8 is one raw byte, not a varint
    }

    mutating func i16(_ id: Int16, _ v: Int16) {
        fieldHeader(id, .i16)
        zigzag(Int64(v))
    }

    mutating func i32(_ id: Int16, _ v: Int32) {
        fieldHeader(id, .i32)
        zigzag(Int64(v))
    }

    mutating func i64(_ id: Int16, _ v: Int64) {
        fieldHeader(id, .i64)
        zigzag(v)
    }

    /// A bool field carries its value in the type nibble and has no value byte.
    mutating func bool(_ id: Int16, _ v: Bool) {
        fieldHeader(id, v ? .boolTrue : .boolFalse)
    }

    mutating func binary(_ id: Int16, _ v: UnsafeRawBufferPointer) {
        fieldHeader(id, .binary)
        varint(UInt64(v.count))
        bytes.append(contentsOf: v)
    }

    mutating func binary(_ id: Int16, _ v: [UInt8]) {
        v.withUnsafeBytes { binary(id, $0) }
    }

    mutating func string(_ id: Int16, _ v: String) {
        var v = v
        v.withUTF8 { binary(id, UnsafeRawBufferPointer($0)) }
    }

    /// Starts a struct-valued field; close it with `structEnd()`.
    mutating func structBegin(_ id: Int16) {
        fieldHeader(id, .structure)
        stack.append(lastID)
        lastID = 0
    }

    /// Writes the stop byte of the innermost open struct.
    mutating func structEnd() {
        bytes.append(0)
        lastID = stack.popLast() ?? 0
    }

    /// Starts a list-valued field of `count` elements of `type`; elements follow without field headers.
    mutating func listBegin(_ id: Int16, _ type: FieldType, count: Int) {
        fieldHeader(id, .list)
        listHeader(type, count: count)
    }

    mutating func listHeader(_ type: FieldType, count: Int) {
        if count <= 14 {
            bytes.append(UInt8(count << 4) | type.rawValue)
        } else {
            bytes.append(0xF0 | type.rawValue)
            varint(UInt64(count))
        }
    }

    /// Starts one struct element of a list; close it with `structEnd()`.
    mutating func elementBegin() {
        stack.append(lastID)
        lastID = 0
    }

    /// A string element of a list.
    mutating func elementString(_ v: String) {
        var v = v
        v.withUTF8 {
            varint(UInt64($0.count))
            bytes.append(contentsOf: $0)
        }
    }

    /// An i32 element of a list.
    mutating func elementI32(_ v: Int32) {
        zigzag(Int64(v))
    }

    /// Ends the top-level struct.
    mutating func stop() {
        bytes.append(0)
    }
}
