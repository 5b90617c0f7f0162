import ReceiptModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SpillRecord {
    /// The row order of records held in memory, as positions: sorting the positions moves 4 bytes per step where
    /// sorting the records would move (and retain and release) a whole record. Keys are distinct, so the order is
    /// total and does not depend on where the records started.
    static func rowOrder(_ records: [Self]) -> [Int32] {
        var order = (0..<Int32(records.count)).map { $0 }
        order.sort { precedes(records[Int($0)], records[Int($1)]) }
        return order
    }
}

extension PurchaseRecord {
    /// The row order (`precedes`) through one byte string per record that compares as the records do, bytewise:
    /// the records' fields are read once, and each comparison is one `memcmp` in a shared buffer.
    static func rowOrder(_ records: [PurchaseRecord]) -> [Int32] {
        var keys = OrderKeys()
        keys.reserve(records: records.count)
        for r in records { r.appendOrderKey(to: &keys) }
        return keys.sortedPositions()
    }

    /// Environment, bundle_id, original_transaction_id (null first), purchase_date (null first), transaction_id:
    /// `precedes`'s fields in its order, each encoded so that bytewise order is the field's order.
    private func appendOrderKey(to keys: inout OrderKeys) {
        keys.begin()
        _ = text.withUnsafeBytes { t in Self.appendOrderKey(facts, text: t, to: &keys.bytes) }
    }

    /// The order key of `facts`, whose byte strings are in `t`, appended to `bytes`; the key (environment,
    /// bundle_id, transaction_id) is the bytes up to the bundle id's end and the transaction id at the end.
    @discardableResult
    static func appendOrderKey(_ facts: PurchaseFacts, text t: UnsafeRawBufferPointer, to bytes: inout [UInt8])
        -> SpillKeyBounds
    {
        let start = bytes.count
        bytes.append(facts.environment.rawValue)
        OrderKeys.appendString(t.span(facts.bundleID), to: &bytes)
        let headEnd = bytes.count - start
        if let o = facts.originalTransactionID {
            bytes.append(1)
            OrderKeys.appendString(t.span(o), to: &bytes)
        } else {
            bytes.append(0)
        }
        if let d = facts.purchaseDate {
            bytes.append(1)
            withUnsafeBytes(of: (UInt64(bitPattern: d) ^ (1 << 63)).bigEndian) { bytes.append(contentsOf: $0) }
        } else {
            bytes.append(0)
        }
        let tailStart = bytes.count - start
        bytes.append(contentsOf: t.span(facts.transactionID))
        return SpillKeyBounds(headEnd: headEnd, tailStart: tailStart)
    }

    static var hasOrderPrefix: Bool { true }

    func spillOrderKey(into key: inout [UInt8]) -> SpillKeyBounds {
        text.withUnsafeBytes { t in Self.appendOrderKey(facts, text: t, to: &key) }
    }
}

/// Byte strings that sort as the records they were made from, in one buffer.
struct OrderKeys {
    var bytes: [UInt8] = []
    /// Where each key starts; a key ends where the next starts.
    private var starts: [Int] = []

    mutating func reserve(records: Int) {
        starts.reserveCapacity(records + 1)
        bytes.reserveCapacity(records * 64)
    }

    mutating func begin() { starts.append(bytes.count) }

    /// A string that may be followed by more of the key: a 0 byte becomes 0 255 and the string ends with 0 0, so
    /// that a string sorts before every longer string it begins, as `compareBytes` orders them.
    static func appendString(_ s: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        // Ids hold no 0 byte: such a string is copied whole.
        if s.isEmpty || memchr(s.baseAddress!, 0, s.count) == nil {  // not empty: it has a base address
            bytes.append(contentsOf: s)
        } else {
            for b in s {
                bytes.append(b)
                if b == 0 { bytes.append(255) }
            }
        }
        bytes.append(0)
        bytes.append(0)
    }

    /// The positions of the keys in their bytewise order.
    func sortedPositions() -> [Int32] {
        var order = (0..<Int32(starts.count)).map { $0 }
        let ends = starts.dropFirst() + [bytes.count]
        let bounds = Array(zip(starts, ends))
        bytes.withUnsafeBytes { b in
            bounds.withUnsafeBufferPointer { k in
                order.sort { x, y in
                    let (s0, e0) = k[Int(x)]
                    let (s1, e1) = k[Int(y)]
                    return compareBytes(
                        UnsafeRawBufferPointer(rebasing: b[s0..<e0]), UnsafeRawBufferPointer(rebasing: b[s1..<e1])) < 0
                }
            }
        }
        return order
    }
}
