import Foundation
import ReceiptModel

/// The purchases merged by key in memory as records, fed straight from the batches' occurrences.
///
/// Records sit in one array whose capacity is reserved for as many records as the budget can hold: address space
/// only, whose pages become memory as records fill them, so that the table never grows by copying what it holds
/// (no moment with the records twice in memory) and hands them out without a copy. An open-addressing index of
/// slots maps the 64-bit hash of a key to its record; a hit is confirmed by comparing the key with the record's own
/// text. The hash comes with the occurrence (its worker made it), and the history stage reads a group's slots and records ahead
/// (`warm`) before adding them. An occurrence of a purchase already held merges in place and allocates nothing
/// (unless its newest facts carry different byte strings; one that repeats them only moves the record's recency
/// and counts); only a new purchase makes a record.
struct PurchaseRecordTable {
    private struct Slot {
        /// The key's hash; meaningful only when `record` is not 0.
        var hash: UInt64 = 0
        /// Record index + 1 (0: empty).
        var record: UInt32 = 0
    }

    private(set) var records: [PurchaseRecord] = []
    /// The records `records` is reserved for when the first is added.
    private let reservation: Int
    /// The count is a power of two, at most half used.
    private var slots: [Slot]
    /// The bytes the table holds: its records' values and what they allocated, and its slots.
    private(set) var bytes = 0
    /// What `warm` read, kept so that its reads are not optimised away.
    private var warmth: UInt64 = 0

    private static let initialSlots = 1 << 10
    /// At most this many records are reserved at once (beyond, the array grows as arrays do).
    private static let maxReservation = 1 << 22
    private static let slotBytes = MemoryLayout<Slot>.stride
    private static let recordBytes = MemoryLayout<PurchaseRecord>.stride

    /// A table for `budget` bytes (its `bytes` are compared with the budget by the caller, who empties it).
    init(budget: Int) {
        slots = Array(repeating: Slot(), count: Self.initialSlots)
        bytes = slots.count * Self.slotBytes
        reservation = min(max(budget, 0) / Self.recordBytes + 1, Self.maxReservation)
    }

    var isEmpty: Bool { records.isEmpty }
    var count: Int { records.count }

    /// Adds occurrence `o` of input `input`, whose text is `text`.
    mutating func add(_ o: PurchaseOccurrence, input: Int, text: UnsafeRawBufferPointer) {
        let environment = o.facts.environment
        let bundle = text.span(o.facts.bundleID)
        let txid = text.span(o.facts.transactionID)
        let h = o.keyHash
        let mask = slots.count - 1
        var s = Int(truncatingIfNeeded: h) & mask
        while slots[s].record != 0 {
            if slots[s].hash == h {
                let i = Int(slots[s].record) - 1
                // A repeat states the same spans over a text that begins with the occurrence's, so the same key:
                // it needs no other check.
                let recency = PurchaseRecord.recency(o, input: input)
                if records[i].mergeRepeat(o, recency: recency, text: text) { return }
                let same = records.withUnsafeBufferPointer { held in
                    let f = held[i].facts
                    return f.environment == environment
                        && held[i].text.withUnsafeBytes {
                            equalBytes($0.span(f.bundleID), bundle) && equalBytes($0.span(f.transactionID), txid)
                        }
                }
                if same {
                    let before = records[i].heapBytes
                    records[i].mergeChanged(o, recency: recency, text: text)
                    bytes += records[i].heapBytes - before
                    return
                }
            }
            s = (s + 1) & mask
        }
        let record = PurchaseRecord(o, input: input, text: text)
        bytes += Self.recordBytes + record.heapBytes
        if records.capacity == 0 { records.reserveCapacity(reservation) }
        records.append(record)
        slots[s] = Slot(hash: h, record: UInt32(records.count))
        if records.count * 2 > slots.count { grow() }
    }

    /// Empties the table but keeps its storage, so that refilling it after a spill writes to memory already
    /// mapped instead of mapping new pages.
    mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
        slots.withUnsafeMutableBufferPointer { s in
            for i in s.indices { s[i].record = 0 }
        }
        bytes = slots.count * Self.slotBytes
    }

    /// Takes every record out, leaving the table empty.
    mutating func drain() -> [PurchaseRecord] {
        let all = records
        records = []
        slots = Array(repeating: Slot(), count: Self.initialSlots)
        bytes = slots.count * Self.slotBytes
        return all
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: old.count * 2)
        bytes += (slots.count - old.count) * Self.slotBytes
        let mask = slots.count - 1
        for slot in old where slot.record != 0 {
            var s = Int(truncatingIfNeeded: slot.hash) & mask
            while slots[s].record != 0 { s = (s + 1) & mask }
            slots[s] = slot
        }
    }

    /// Reads the memory that adding occurrences of these key hashes will touch (their slots, and the records and
    /// texts they find), all before any is added: the cache misses of a group overlap instead of coming one after
    /// the other. Each level is read for the whole group before the next (the slots, then the records they name,
    /// then those records' texts), so that no read waits for another of its level. Changes nothing the table
    /// holds.
    mutating func warm(_ hashes: UnsafeBufferPointer<UInt64>) {
        var sum: UInt64 = 0
        let mask = slots.count - 1
        withUnsafeTemporaryAllocation(of: Int.self, capacity: hashes.count) { found in
            var n = 0
            slots.withUnsafeBufferPointer { slots in
                for h in hashes {
                    var s = Int(truncatingIfNeeded: h) & mask
                    while slots[s].record != 0 {
                        if slots[s].hash == h {
                            found[n] = Int(slots[s].record) - 1
                            n += 1
                            break
                        }
                        s = (s + 1) & mask
                    }
                }
            }
            records.withUnsafeBufferPointer { held in
                // A byte of each cache line a record's value spans.
                for k in 0..<n {
                    let raw = UnsafeRawPointer(held.baseAddress! + found[k])
                    var at = 0
                    while at < Self.recordBytes {
                        sum &+= UInt64(raw.load(fromByteOffset: at, as: UInt8.self))
                        at += 64
                    }
                    sum &+= UInt64(raw.load(fromByteOffset: Self.recordBytes - 1, as: UInt8.self))
                }
                for k in 0..<n {
                    let record = held.baseAddress! + found[k]
                    sum &+= UInt64(record.pointee.text.first ?? 0) &+ UInt64(record.pointee.text.last ?? 0)
                }
            }
        }
        warmth = sum
    }
}
