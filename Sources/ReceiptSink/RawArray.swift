/// A growable array of plain values in manually managed memory, for the dictionary's entries and hash slots:
/// element access is a bounds-checked load or store without Array's copy-on-write machinery. Not copyable.
struct RawArray<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    subscript(i: Int) -> Element {
        @inline(__always) get {
            precondition(i >= 0 && i < count)
            return base[i]  // checked above
        }
        @inline(__always) set {
            precondition(i >= 0 && i < count)
            base[i] = newValue  // checked above
        }
    }

    mutating func append(_ v: Element) {
        if count == capacity { grow(count + 1) }
        (base + count).initialize(to: v)  // count < capacity after the check above
        count += 1
    }

    /// Appends `n` copies of `v`.
    mutating func append(_ v: Element, count n: Int) {
        precondition(n >= 0)
        if capacity - count < n { grow(count + n) }
        (base + count).initialize(repeating: v, count: n)  // count + n <= capacity after the check above
        count += n
    }

    /// Sets every element to `v`.
    mutating func fill(_ v: Element) {
        base.update(repeating: v, count: count)  // the first count elements are initialized
    }

    mutating func removeAll() { count = 0 }

    private mutating func grow(_ minimum: Int) {
        let n = max(capacity * 2, minimum)
        let b = UnsafeMutablePointer<Element>.allocate(capacity: n)
        b.initialize(from: base, count: count)  // count <= capacity < n
        base.deallocate()
        base = b
        capacity = n
    }
}
