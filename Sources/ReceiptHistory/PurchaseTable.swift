import Foundation
import ReceiptModel

/// The purchases merged by key in memory, fed straight from the batches' occurrences.
///
/// Records sit in fixed-size chunks, so that the table grows without copying what it holds (no moment with the
/// records twice in memory) and its memory is the records' own. An open-addressing index of slots maps the 64-bit
/// hash of a key to its record; a hit is confirmed by comparing the key with the record's own text. The hash comes
/// with the occurrence (its worker made it), and the history stage reads a group's slots and records ahead
/// (`warm`) before adding them. An occurrence of a purchase already held merges in place and allocates nothing
/// (unless its newest facts carry different byte strings; one that repeats them only moves the record's recency
/// and counts); only a new purchase makes a record.
struct PurchaseTable {
    private struct Slot {
        /// The key's hash; meaningful only when `record` is not 0.
        var hash: UInt64 = 0
        /// Record index + 1 (0: empty).
        var record: UInt32 = 0
    }

    private var chunks: [[PurchaseRecord]] = []
    /// The number of records held (the first `count` of the chunks' records, in order).
    private(set) var count = 0
    /// The count is a power of two, at most half used.
    private var slots: [Slot]
    /// The bytes the table holds: its records' values and what they allocated, and its slots.
    private(set) var bytes = 0
    /// What `warm` read, kept so that its reads are not optimised away.
    private var warmth: UInt64 = 0

    private static let initialSlots = 1 << 10
    /// Records per chunk: `chunkShift` bits of a record's index.
    private static let chunkShift = 12
    private static let chunkMask = (1 << chunkShift) - 1
    private static let slotBytes = MemoryLayout<Slot>.stride
    private static let recordBytes = MemoryLayout<PurchaseRecord>.stride

    init() {
        slots = Array(repeating: Slot(), count: Self.initialSlots)
        bytes = slots.count * Self.slotBytes
    }

    var isEmpty: Bool { count == 0 }

    /// The records held, in the order they were added.
    var records: Records { Records(chunks: chunks, count: count) }

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
                let r = Int(slots[s].record) - 1
                let c = r >> Self.chunkShift
                let i = r & Self.chunkMask
                let same = chunks[c].withUnsafeBufferPointer { held in
                    let f = held[i].facts
                    return f.environment == environment
                        && held[i].text.withUnsafeBytes {
                            equalBytes($0.span(f.bundleID), bundle) && equalBytes($0.span(f.transactionID), txid)
                        }
                }
                if same {
                    let before = chunks[c][i].heapBytes
                    chunks[c][i].merge(o, input: input, text: text)
                    bytes += chunks[c][i].heapBytes - before
                    return
                }
            }
            s = (s + 1) & mask
        }
        let record = PurchaseRecord(o, input: input, text: text)
        bytes += Self.recordBytes + record.heapBytes
        let c = count >> Self.chunkShift
        if c == chunks.count {
            chunks.append([])
            chunks[c].reserveCapacity(1 << Self.chunkShift)
        }
        chunks[c].append(record)
        count += 1
        slots[s] = Slot(hash: h, record: UInt32(count))
        if count * 2 > slots.count { grow() }
    }

    /// Empties the table but keeps its storage, so that refilling it after a spill writes to memory already
    /// mapped instead of allocating new chunks page by page.
    mutating func removeAll() {
        for c in chunks.indices { chunks[c].removeAll(keepingCapacity: true) }
        count = 0
        slots.withUnsafeMutableBufferPointer { s in
            for i in s.indices { s[i].record = 0 }
        }
        bytes = slots.count * Self.slotBytes
    }

    /// Takes every record out, leaving the table empty (each chunk is let go as soon as it is copied out).
    mutating func drain() -> [PurchaseRecord] {
        var all: [PurchaseRecord] = []
        all.reserveCapacity(count)
        for c in chunks.indices {
            all.append(contentsOf: chunks[c])
            chunks[c] = []
        }
        chunks = []
        count = 0
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
    /// the other. Changes nothing the table holds.
    mutating func warm(_ hashes: UnsafeBufferPointer<UInt64>) {
        var sum: UInt64 = 0
        let mask = slots.count - 1
        slots.withUnsafeBufferPointer { slots in
            for h in hashes {
                var s = Int(truncatingIfNeeded: h) & mask
                while slots[s].record != 0 {
                    if slots[s].hash == h {
                        let r = Int(slots[s].record) - 1
                        chunks[r >> Self.chunkShift].withUnsafeBufferPointer { held in
                            // Fields spread over the record's value (some hundred bytes), then its text.
                            let record = held.baseAddress! + (r & Self.chunkMask)
                            sum &+=
                                UInt64(record.pointee.facts.environment.rawValue)
                                &+ UInt64(bitPattern: record.pointee.facts.webOrderLineItemID ?? 0)
                                &+ UInt64(bitPattern: record.pointee.facts.cancellationDate ?? 0)
                                &+ UInt64(record.pointee.facts.appAccountToken?.count ?? 0)
                                &+ UInt64(bitPattern: record.pointee.newest.created)
                                &+ UInt64(bitPattern: record.pointee.occurrences)
                            sum &+= UInt64(record.pointee.text.first ?? 0) &+ UInt64(record.pointee.text.last ?? 0)
                        }
                        break
                    }
                    s = (s + 1) & mask
                }
            }
        }
        warmth = sum
    }

    /// The records of a table, in the order they were added, where they lie.
    struct Records: RandomAccessCollection {
        let chunks: [[PurchaseRecord]]
        let count: Int

        var startIndex: Int { 0 }
        var endIndex: Int { count }

        subscript(i: Int) -> PurchaseRecord { chunks[i >> PurchaseTable.chunkShift][i & PurchaseTable.chunkMask] }
    }
}
