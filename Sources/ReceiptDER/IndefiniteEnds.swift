/// The ends of the indefinite-length elements that one container parse has found, so that reading such an
/// element again does not walk its contents again.
///
/// Why: the end of an indefinite-length element is only known after walking its children to the end-of-contents
/// marker, and the parser reads each level of a BER receipt (ContentInfo, [0], SignedData, ...) on its way down,
/// so without this memory the innermost contents were walked once per enclosing level.
///
/// An entry holds where an element starts, where it ends and the depth its walk was made at. A walk that
/// succeeded at depth d within some limit succeeds with the same end at any depth up to d and within any limit
/// at or past that end (its children, and their children, lie before it and are read alike); anything else is
/// walked again, so every error is thrown as before. Owned by `ReceiptParser`, valid for one buffer: the parser
/// empties it before each container parse and never hands it to another reader.
struct IndefiniteEnds {
    static let capacity = 16
    /// `count`, then `capacity` triples (start, end, depth).
    let storage: UnsafeMutablePointer<Int>

    init() {
        storage = .allocate(capacity: 1 + 3 * Self.capacity)
        storage[0] = 0
    }

    func deallocate() { storage.deallocate() }

    func removeAll() { storage[0] = 0 }

    /// The end of the indefinite-length element at `start` when a walk at depth `depth` or deeper found it and it
    /// lies within `limit`; nil otherwise.
    func end(of start: Int, depth: Int, limit: Int) -> Int? {
        let count = storage[0]  // at most capacity
        var i = 0
        while i < count {
            let e = storage + 1 + 3 * i  // in the allocation: i < count <= capacity
            if e[0] == start { return e[2] >= depth && e[1] <= limit ? e[1] : nil }
            i += 1
        }
        return nil
    }

    /// Records a successful walk (ignored once full: the memory only saves work).
    func remember(start: Int, end: Int, depth: Int) {
        let count = storage[0]
        guard count < Self.capacity else { return }
        let e = storage + 1 + 3 * count  // in the allocation: count < capacity
        e[0] = start
        e[1] = end
        e[2] = depth
        storage[0] = count + 1
    }
}
