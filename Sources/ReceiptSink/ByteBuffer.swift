/// A growable byte buffer in manually managed memory: the Parquet writer's page, chunk and scratch buffers.
///
/// Appends are a capacity compare and a store (Array's append(contentsOf:) is a generic call with a uniqueness
/// check per value). Hot loops `reserve` once for a whole slice of rows and then write with the unchecked `store`
/// methods. Not copyable: it owns its memory.
///
/// A buffer may keep `headroom` bytes before `base`, where `spanWithPrefix` writes a short prefix that is only
/// known once the bytes are complete (a page's definition levels before its values), so that the two are one span
/// without moving the bytes.
struct ByteBuffer: ~Copyable {
    private(set) var base: UnsafeMutableRawPointer
    /// Bytes written; the caller may lower it (never raise it past what was written).
    var count = 0
    private(set) var capacity: Int
    /// Bytes allocated before `base` (a multiple of 16, so `base` stays 16-aligned).
    let headroom: Int

    init(capacity: Int = 0, headroom: Int = 0) {
        self.capacity = max(capacity, 64)
        self.headroom = (max(headroom, 0) + 15) & ~15
        base = mallocBytes(self.headroom + self.capacity) + self.headroom
    }

    deinit { freeBytes(base - headroom) }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    mutating func removeAll() { count = 0 }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if capacity - count < extra { grow(extra) }
    }

    @inline(never)
    private mutating func grow(_ extra: Int) {
        let n = max(capacity * 2, count + extra)
        if headroom + n >= Self.reallocBytesFrom {
            // realloc keeps the headroom and the bytes; a large block (mmap'ed by malloc) moves by remapping its
            // pages instead of copying them (the page buffers grow to about `pageBytes` in the first pages).
            base = reallocBytes(base - headroom, headroom + n) + headroom
        } else {
            // Small blocks: copy only the bytes written (realloc would copy the whole block, headroom included).
            let b = mallocBytes(headroom + n) + headroom
            b.copyMemory(from: base, byteCount: count)  // count <= capacity < n
            freeBytes(base - headroom)
            base = b
        }
        capacity = n
    }

    /// Blocks from this size grow by realloc: glibc's default mmap threshold, above which realloc remaps.
    static let reallocBytesFrom = 128 << 10

    /// Writes `prefix` into the headroom, just before the bytes, and returns prefix and bytes as one span; nil
    /// (nothing written) when the prefix is longer than the headroom. The span is valid until the next change.
    mutating func spanWithPrefix(_ prefix: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard prefix.count <= headroom else { return nil }
        let start = base - prefix.count
        // In bounds: prefix.count <= headroom bytes are allocated before base.
        if prefix.count > 0 { start.copyMemory(from: prefix.baseAddress!, byteCount: prefix.count) }
        return UnsafeRawBufferPointer(start: start, count: prefix.count + count)
    }

    // MARK: - Checked appends

    @inline(__always)
    mutating func append(_ p: UnsafeRawBufferPointer) {
        reserve(p.count)
        store(p)
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        store(byte)
    }

    @inline(__always)
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ v: T) {
        reserve(MemoryLayout<T>.size)
        storeLittleEndian(v)
    }

    // MARK: - Unchecked stores (the caller reserved the room)

    @inline(__always)
    mutating func store(_ p: UnsafeRawBufferPointer) {
        assert(capacity - count >= p.count)
        // In bounds: the caller reserved p.count bytes; a non-empty buffer has a base address.
        if p.count > 0 { (base + count).copyMemory(from: p.baseAddress!, byteCount: p.count) }
        count += p.count
    }

    @inline(__always)
    mutating func store(_ byte: UInt8) {
        assert(count < capacity)
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)  // in bounds: reserved by the caller
        count += 1
    }

    @inline(__always)
    mutating func storeLittleEndian<T: FixedWidthInteger>(_ v: T) {
        assert(capacity - count >= MemoryLayout<T>.size)
        // In bounds: reserved by the caller; unaligned because values of any width share the buffer.
        (base + count).storeBytes(of: v.littleEndian, as: T.self)
        count += MemoryLayout<T>.size
    }

    /// Overwrites 4 bytes at `offset` (< count - 3) with `v`, little-endian.
    mutating func patchUInt32(_ v: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= count)
        (base + offset).storeBytes(of: v.littleEndian, as: UInt32.self)
    }
}
