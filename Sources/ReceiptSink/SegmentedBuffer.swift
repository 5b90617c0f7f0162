/// An append-only byte sequence kept in segments that never move: a column chunk's compressed pages until the
/// row group is written. Growing a contiguous buffer by doubling copied everything written so far and held the
/// old and new copies at once (up to three times the chunk); segments cost neither. Segments double from
/// `firstSegment` up to `maxSegment` bytes, so small columns stay small, and are kept for the next row group.
struct SegmentedBuffer: ~Copyable {
    static let firstSegment = 16 << 10
    static let maxSegment = 1 << 20

    private var segments: [UnsafeMutableRawPointer] = []
    private var sizes: [Int] = []
    /// The segment being written and its fill.
    private var current = 0
    private var used = 0
    /// Bytes appended since the last `removeAll`.
    private(set) var count = 0

    init() {}

    deinit {
        for s in segments { s.deallocate() }
    }

    mutating func append(_ p: UnsafeRawBufferPointer) {
        guard var src = p.baseAddress else { return }
        var left = p.count
        while left > 0 {
            if current == segments.count {
                let size = segments.isEmpty ? Self.firstSegment : min(sizes[sizes.count - 1] * 2, Self.maxSegment)
                segments.append(.allocate(byteCount: size, alignment: 16))
                sizes.append(size)
            }
            let n = min(left, sizes[current] - used)
            // In range: n <= the room left in the current segment and <= the bytes left in `p`.
            (segments[current] + used).copyMemory(from: src, byteCount: n)
            used += n
            src += n
            left -= n
            count += n
            if used == sizes[current] {
                current += 1
                used = 0
            }
        }
    }

    /// Calls `body` with the bytes in order, one segment at a time.
    func forEachSegment<E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        var left = count
        var k = 0
        while left > 0 {
            let n = min(left, sizes[k])  // every segment before `current` is full
            try body(UnsafeRawBufferPointer(start: segments[k], count: n))
            left -= n
            k += 1
        }
    }

    /// Forgets the bytes and keeps the segments for reuse.
    mutating func removeAll() {
        current = 0
        used = 0
        count = 0
    }
}
