import Foundation
import ReceiptModel

/// The purchases merged by key in memory, fed straight from the batches' occurrences.
///
/// Records sit in one array. An open-addressing index of slots maps the 64-bit hash of a key to its record and
/// to a copy of the key's bytes in one flat buffer, so that a lookup touches the slot and the key bytes and a
/// hit is confirmed by comparing them. The hash comes with the occurrence (its worker made it), and the history
/// stage reads a group's slots, keys and records ahead (`warm`) before adding them. An occurrence of a purchase
/// already held merges in place and allocates nothing (unless its newest facts carry different byte strings; one
/// that repeats them only moves the record's recency and counts); only a new purchase makes a record.
struct PurchaseTable {
    private struct Slot {
        /// The key's hash; meaningful only when `record` is not 0.
        var hash: UInt64 = 0
        /// Record index + 1 (0: empty).
        var record: Int32 = 0
        /// Length of the key's bundle id; the key is at `keyOffset` in `keys`: environment, bundle id,
        /// transaction id.
        var bundleLength: Int32 = 0
        var keyOffset = 0
        var keyLength = 0
    }

    private(set) var records: [PurchaseRecord] = []
    private var keys: [UInt8] = []
    /// The count is a power of two, at most half used.
    private var slots: [Slot]
    /// Estimated bytes of the records held, as `PurchaseRecord.estimatedBytes` counts them.
    private(set) var bytes = 0
    /// What `warm` read, kept so that its reads are not optimised away.
    private var warmth: UInt64 = 0

    private static let initialSlots = 1 << 10

    init() { slots = Array(repeating: Slot(), count: Self.initialSlots) }

    var isEmpty: Bool { records.isEmpty }

    /// Adds occurrence `o` of input `input`, whose text is `text`.
    mutating func add(_ o: PurchaseOccurrence, input: Int, text: UnsafeRawBufferPointer) {
        let environment = o.facts.environment.rawValue
        let bundle = text.span(o.facts.bundleID)
        let txid = text.span(o.facts.transactionID)
        let h = o.keyHash
        let mask = slots.count - 1
        var s = Int(truncatingIfNeeded: h) & mask
        let keyLength = 1 + bundle.count + txid.count
        while slots[s].record != 0 {
            let slot = slots[s]
            if slot.hash == h && slot.keyLength == keyLength && Int(slot.bundleLength) == bundle.count
                && keys.withUnsafeBytes({ k in
                    k[slot.keyOffset] == environment
                        && Self.equal(k, slot.keyOffset + 1, bundle)
                        && Self.equal(k, slot.keyOffset + 1 + bundle.count, txid)
                })
            {
                records[Int(slot.record) - 1].merge(o, input: input, text: text)
                return
            }
            s = (s + 1) & mask
        }
        let record = PurchaseRecord(o, input: input, text: text)
        bytes += record.estimatedBytes
        records.append(record)
        slots[s] = Slot(
            hash: h, record: Int32(records.count), bundleLength: Int32(bundle.count), keyOffset: keys.count,
            keyLength: keyLength)
        keys.append(environment)
        keys.append(contentsOf: bundle)
        keys.append(contentsOf: txid)
        if records.count * 2 > slots.count { grow() }
    }

    /// Whether `k[offset..<offset + b.count]` holds the bytes of `b` (the range is in bounds).
    @inline(__always)
    private static func equal(_ k: UnsafeRawBufferPointer, _ offset: Int, _ b: UnsafeRawBufferPointer) -> Bool {
        b.count == 0 || memcmp(k.baseAddress! + offset, b.baseAddress!, b.count) == 0
    }

    /// Empties the table but keeps its storage, so that refilling it after a spill writes to memory already
    /// mapped instead of growing new arrays page by page.
    mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        slots.withUnsafeMutableBufferPointer { s in
            for i in s.indices { s[i].record = 0 }
        }
        bytes = 0
    }

    /// Takes every record out, leaving the table empty.
    mutating func drain() -> [PurchaseRecord] {
        let all = records
        records = []
        keys = []
        slots = Array(repeating: Slot(), count: Self.initialSlots)
        bytes = 0
        return all
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: old.count * 2)
        let mask = slots.count - 1
        for slot in old where slot.record != 0 {
            var s = Int(truncatingIfNeeded: slot.hash) & mask
            while slots[s].record != 0 { s = (s + 1) & mask }
            slots[s] = slot
        }
    }

    /// Reads the memory that adding occurrences of these key hashes will touch (their slots, the key bytes and
    /// records they find), all before any is added: the cache misses of a group overlap instead of coming one after
    /// the other. Changes nothing the table holds.
    mutating func warm(_ hashes: UnsafeBufferPointer<UInt64>) {
        var sum: UInt64 = 0
        let mask = slots.count - 1
        slots.withUnsafeBufferPointer { slots in
            keys.withUnsafeBufferPointer { keys in
                records.withUnsafeBufferPointer { records in
                    for h in hashes {
                        var s = Int(truncatingIfNeeded: h) & mask
                        while slots[s].record != 0 {
                            if slots[s].hash == h {
                                // Both ends of the key and of the record's text, which may lie on two lines.
                                let r = Int(slots[s].record) - 1
                                let key = slots[s].keyOffset
                                sum &+= UInt64(keys[key]) &+ UInt64(keys[key + slots[s].keyLength - 1])
                                // Fields spread over the record's value (some hundred bytes), then its text.
                                let record = records.baseAddress! + r
                                sum &+=
                                    UInt64(record.pointee.facts.environment.rawValue)
                                    &+ UInt64(bitPattern: record.pointee.facts.webOrderLineItemID ?? 0)
                                    &+ UInt64(bitPattern: record.pointee.facts.cancellationDate ?? 0)
                                    &+ UInt64(record.pointee.facts.appAccountToken?.count ?? 0)
                                    &+ UInt64(bitPattern: record.pointee.newest.created)
                                    &+ UInt64(bitPattern: record.pointee.userAt?.line ?? 0)
                                    &+ UInt64(bitPattern: record.pointee.tokenAt?.line ?? 0)
                                    &+ UInt64(bitPattern: record.pointee.occurrences)
                                sum &+= UInt64(records[r].text.first ?? 0) &+ UInt64(records[r].text.last ?? 0)
                                break
                            }
                            s = (s + 1) & mask
                        }
                    }
                }
            }
        }
        warmth = sum
    }
}
