import Foundation
import ReceiptModel

/// Purchases merged by key in their compact form (`CompactPurchase`), for a history larger than its memory budget
/// holds as records: a record takes about a third of the memory, so that a budget-full of input is about three
/// times as long and a long archive spills each purchase about half as often.
///
/// Records lie one after the other in one byte array (reserved for the budget: address space, whose pages become
/// memory as records fill them), each its facts then its merge state with a few bytes of room. An occurrence that
/// repeats the facts held (their bytes equal the occurrence's, encoded the same way) merges into the state in
/// place; one that changes them merges into the decoded record, which is written anew at the end (the old bytes
/// count as `dead` until the store is emptied or `drainColdest` moves the records it keeps together). The index of
/// slots maps the high 32 bits of a key's hash to its record (a power of two slots, at most half used, probed from
/// the hash's top bits); a hit is confirmed by the key's bytes, which begin the facts.
struct CompactPurchaseStore {
    private struct Entry {
        /// Where the record starts in `arena`.
        var offset: UInt32
        /// Bytes of its facts.
        var facts: UInt32
        /// `clock` when an occurrence was last added to it.
        var touched: UInt32
        /// Bytes given to its merge state: what it holds and room to grow.
        var state: UInt8
    }

    private var arena: [UInt8] = []
    private var entries: [Entry] = []
    /// The hash's high 32 bits << 32 | entry index + 1 (0: empty).
    private var slots: [UInt64]
    private var slotBits: UInt64
    private var dictionary = TextDictionary()
    /// Bytes of `arena` that no record uses any more.
    private(set) var dead = 0
    /// The facts being added or merged, encoded.
    private var scratch = SpillWriter()
    private var stateScratch = SpillWriter()
    /// The bytes `arena` is reserved for when the first record is added.
    private let reservation: Int
    /// What `warm` read, kept so that its reads are not optimised away.
    private var warmth: UInt64 = 0
    /// Occurrences added so far (it stops at its maximum): how recently a record was added to.
    private var clock: UInt32 = 0

    /// `drainColdest` gives at least one in this many records (the least recently added to).
    static let coldShare = 8
    /// Room left after a record's merge state, so that a state that grows by a few bytes stays in place.
    static let stateRoom = 4
    /// The budgets a table takes the compact form under: from 1 MiB (below, a table holds so few records that
    /// their form matters little) to 3 GiB (offsets into a store's bytes are 32-bit).
    static let budgets = (1 << 20)...(3 << 30)
    private static let initialSlotBits: UInt64 = 10

    init(budget: Int) {
        reservation = min(max(budget, 0), Self.budgets.upperBound)
        slotBits = Self.initialSlotBits
        slots = [UInt64](repeating: 0, count: 1 << Int(Self.initialSlotBits))
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// The bytes the store holds: its records (dead bytes included), entries, slots and dictionary.
    var bytes: Int {
        arena.count + entries.count * MemoryLayout<Entry>.stride + slots.count * 8 + dictionary.bytes
    }

    @inline(__always)
    private func slot(_ tag: UInt64) -> Int { Int(truncatingIfNeeded: tag >> (32 - slotBits)) }

    /// Adds occurrence `o` of input `input`, whose text is `text`.
    mutating func add(_ o: PurchaseOccurrence, input: Int, text: UnsafeRawBufferPointer) {
        var facts = o.facts
        if facts.cancellationDate == nil { facts.cancellationReason = nil }
        let recency = PurchaseRecord.recency(o, input: input)
        scratch.bytes.removeAll(keepingCapacity: true)
        let keyBytes = CompactPurchase.encodeFacts(facts, text: text, into: &scratch, dictionary: &dictionary)
        let tag = o.keyHash >> 32
        let mask = slots.count - 1
        var s = slot(tag)
        if clock < UInt32.max { clock += 1 }
        while slots[s] != 0 {
            if slots[s] >> 32 == tag {
                let i = Int(truncatingIfNeeded: slots[s] & 0xffff_ffff) - 1
                if holds(i, prefix: keyBytes) {
                    if entries[i].facts == scratch.bytes.count && holds(i, prefix: scratch.bytes.count) {
                        var state = self.state(i)
                        state.merge(o, recency: recency)
                        write(state, of: i)
                    } else {
                        var r = record(i)
                        r.merge(o, input: input, text: text)
                        replace(i, with: r)
                    }
                    entries[i].touched = clock
                    return
                }
            }
            s = (s + 1) & mask
        }
        entries.append(put(CompactMergeState(o, recency: recency)))
        slots[s] = tag << 32 | UInt64(entries.count)
        if entries.count * 2 > slots.count { grow() }
    }

    /// Makes the index large enough for `n` records, so that adding them does not grow it step by step.
    mutating func reserve(records n: Int) {
        guard isEmpty else { return }
        while (1 << Int(slotBits)) < n * 2 { slotBits += 1 }
        if slots.count != 1 << Int(slotBits) { slots = [UInt64](repeating: 0, count: 1 << Int(slotBits)) }
        entries.reserveCapacity(n)
    }

    /// Adds `r`, whose key the store does not hold (records merged by key elsewhere).
    mutating func insert(_ r: PurchaseRecord) {
        scratch.bytes.removeAll(keepingCapacity: true)
        let h = r.text.withUnsafeBytes { t in
            _ = CompactPurchase.encodeFacts(r.facts, text: t, into: &scratch, dictionary: &dictionary)
            return PurchaseOccurrence.keyHash(
                environment: r.facts.environment.rawValue, bundleID: t.span(r.facts.bundleID),
                transactionID: t.span(r.facts.transactionID))
        }
        entries.append(put(CompactMergeState(r)))
        place((h >> 32) << 32 | UInt64(entries.count))
        if entries.count * 2 > slots.count { grow() }
    }

    /// Whether record `i` begins with the first `n` bytes of `scratch`.
    @inline(__always)
    private func holds(_ i: Int, prefix n: Int) -> Bool {
        let e = entries[i]
        guard Int(e.facts) >= n else { return false }
        return arena.withUnsafeBytes { a in
            scratch.bytes.withUnsafeBytes { b in equalBytes(a.span(Int(e.offset), n), b.span(0, n)) }
        }
    }

    /// Appends the facts in `scratch` and merge state `state` to the arena; their entry.
    private mutating func put(_ state: CompactMergeState) -> Entry {
        stateScratch.bytes.removeAll(keepingCapacity: true)
        state.encode(into: &stateScratch)
        if arena.capacity == 0 { arena.reserveCapacity(reservation) }
        let offset = arena.count
        arena.append(contentsOf: scratch.bytes)
        arena.append(contentsOf: stateScratch.bytes)
        arena.append(contentsOf: repeatElement(0, count: Self.stateRoom))
        return Entry(
            offset: UInt32(offset), facts: UInt32(scratch.bytes.count), touched: clock,
            state: UInt8(stateScratch.bytes.count + Self.stateRoom))
    }

    /// Writes record `i`'s merge state, in place when it fits its room, else with its facts (which `scratch`
    /// holds) at the end.
    private mutating func write(_ state: CompactMergeState, of i: Int) {
        stateScratch.bytes.removeAll(keepingCapacity: true)
        state.encode(into: &stateScratch)
        let e = entries[i]
        guard stateScratch.bytes.count <= Int(e.state) else {
            dead += Int(e.facts) + Int(e.state)
            entries[i] = put(state)
            return
        }
        let at = Int(e.offset) + Int(e.facts)
        arena.withUnsafeMutableBytes { a in
            stateScratch.bytes.withUnsafeBytes { s in
                a.baseAddress!.advanced(by: at).copyMemory(from: s.baseAddress!, byteCount: s.count)
            }
        }
    }

    /// Writes record `i` anew, as `r`, at the end.
    private mutating func replace(_ i: Int, with r: PurchaseRecord) {
        scratch.bytes.removeAll(keepingCapacity: true)
        _ = r.text.withUnsafeBytes { t in
            CompactPurchase.encodeFacts(r.facts, text: t, into: &scratch, dictionary: &dictionary)
        }
        dead += Int(entries[i].facts) + Int(entries[i].state)
        entries[i] = put(CompactMergeState(r))
    }

    /// Record `i`'s merge state.
    private func state(_ i: Int) -> CompactMergeState {
        let e = entries[i]
        return arena.withUnsafeBytes { a in
            var r = SpillReader(a.span(Int(e.offset) + Int(e.facts), Int(e.state)))
            guard let s = try? CompactMergeState.decode(&r) else {
                preconditionFailure("a compact purchase's merge state does not read back")
            }
            return s
        }
    }

    /// Record `i`, decoded.
    func record(_ i: Int) -> PurchaseRecord {
        let e = entries[i]
        return arena.withUnsafeBytes { a in
            var r = SpillReader(a.span(Int(e.offset), Int(e.facts) + Int(e.state)))
            var text: [UInt8] = []
            guard let facts = CompactPurchase.decodeFacts(&r, dictionary: dictionary, text: &text),
                r.offset == Int(e.facts), let state = try? CompactMergeState.decode(&r)
            else {
                preconditionFailure("a compact purchase record does not read back")
            }
            return state.record(facts, text: text)
        }
    }

    /// Gives every record to `body`, decoded, at most `chunk` at a time in the order added; then empties the store.
    mutating func drain(chunk: Int, _ body: ([PurchaseRecord]) throws(HistoryError) -> Void) throws(HistoryError) {
        var batch: [PurchaseRecord] = []
        batch.reserveCapacity(min(chunk, entries.count))
        for i in entries.indices {
            batch.append(record(i))
            if batch.count >= chunk {
                try body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try body(batch) }
        removeAll()
    }

    /// Gives the records added to least recently, about one in `coldShare`, to `body`, decoded, at most `chunk`
    /// at a time; keeps the others, moved together at the start of the arena (the dead bytes go). In an archive
    /// whose accounts send receipts over time, the records that accounts still add to stay in memory across
    /// spills, so that they are not written to the spill again at every one.
    mutating func drainColdest(chunk: Int, _ body: ([PurchaseRecord]) throws(HistoryError) -> Void)
        throws(HistoryError)
    {
        let cold = coldest()
        var batch: [PurchaseRecord] = []
        batch.reserveCapacity(min(chunk, entries.count))
        for i in entries.indices where cold(entries[i].touched) {
            batch.append(record(i))
            if batch.count >= chunk {
                try body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try body(batch) }
        keep { !cold($0.touched) }
    }

    /// Whether a record last added to at a clock reading is among the least recent: the readings are counted in
    /// buckets, and the oldest buckets that hold at least one in `coldShare` of the records are cold.
    private func coldest() -> (UInt32) -> Bool {
        let buckets = 256
        var oldest = clock
        for e in entries { oldest = min(oldest, e.touched) }
        let span = UInt64(clock - oldest) + 1
        let from = oldest
        let bucket = { (t: UInt32) -> Int in Int(UInt64(t - from) * UInt64(buckets) / span) }
        var counts = [Int](repeating: 0, count: buckets)
        for e in entries { counts[bucket(e.touched)] += 1 }
        var last = 0
        var sum = 0
        while last < buckets - 1 {
            sum += counts[last]
            if sum * Self.coldShare >= entries.count { break }
            last += 1
        }
        let cut = last
        return { bucket($0) <= cut }
    }

    /// Keeps the records that `kept` accepts and drops the others: their bytes move together at the start of the
    /// arena, their entries keep their order, the index is rebuilt over them, and the clock is set back so that the
    /// oldest kept reading is 0 (the readings span only the records held, and the clock does not run out).
    private mutating func keep(_ kept: (Entry) -> Bool) {
        // Each record's tag (the high bits of its key's hash), from the slot that points at it.
        var tags = [UInt32](repeating: 0, count: entries.count)
        for v in slots where v != 0 { tags[Int(truncatingIfNeeded: v & 0xffff_ffff) - 1] = UInt32(v >> 32) }
        var byOffset: [Int32] = []
        var base = clock
        for i in entries.indices where kept(entries[i]) {
            byOffset.append(Int32(i))
            base = min(base, entries[i].touched)
        }
        byOffset.sort { entries[Int($0)].offset < entries[Int($1)].offset }
        // Records move only towards the start, in the order they lie: a copy never overwrites one still to move.
        var end = 0
        for i in byOffset.lazy.map(Int.init) {
            let (from, n) = (Int(entries[i].offset), Int(entries[i].facts) + Int(entries[i].state))
            if from != end {
                _ = arena.withUnsafeMutableBytes { a in memmove(a.baseAddress! + end, a.baseAddress! + from, n) }
            }
            entries[i].offset = UInt32(end)
            end += n
        }
        arena.removeLast(arena.count - end)
        dead = 0
        var count = 0
        for i in entries.indices where kept(entries[i]) {
            entries[count] = entries[i]
            entries[count].touched -= base
            tags[count] = tags[i]
            count += 1
        }
        entries.removeLast(entries.count - count)
        clock -= base
        clearSlots()
        for i in 0..<count { place(UInt64(tags[i]) << 32 | UInt64(i + 1)) }
    }

    /// About the bytes `drainInOrder` takes per record beside the store: its order key and the sort's arrays.
    static let orderKeyBytes = 112

    /// Gives every record to `body`, decoded one at a time, in the row order of `purchases`
    /// (`PurchaseRecord.precedes`, through the records' order keys); then empties the store. Holds the order keys
    /// beside the store (`orderKeyBytes` a record), never the records decoded at once.
    mutating func drainInOrder(_ body: (PurchaseRecord) throws(HistoryError) -> Void) throws(HistoryError) {
        var keys = OrderKeys()
        keys.reserve(records: entries.count)
        // The keys come from the first facts alone, decoded into one reused buffer.
        var text: [UInt8] = []
        for e in entries {
            text.removeAll(keepingCapacity: true)
            let facts = arena.withUnsafeBytes { a in
                var r = SpillReader(a.span(Int(e.offset), Int(e.facts)))
                return CompactPurchase.decodeFacts(
                    &r, dictionary: dictionary, text: &text, fields: CompactPurchase.orderFields)
            }
            guard let facts else { preconditionFailure("a compact purchase record does not read back") }
            keys.begin()
            text.withUnsafeBytes { t in _ = PurchaseRecord.appendOrderKey(facts, text: t, to: &keys.bytes) }
        }
        for i in keys.sortedPositions() { try body(record(Int(i))) }
        removeAll()
    }

    /// Empties the store but keeps its storage (the dictionary's numbers are forgotten with the records).
    mutating func removeAll() {
        arena.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        clearSlots()
        dictionary.removeAll()
        dead = 0
    }

    private mutating func grow() {
        let old = slots
        slotBits += 1
        slots = [UInt64](repeating: 0, count: old.count * 2)
        for v in old where v != 0 { place(v) }
    }

    /// Puts slot value `v` (a tag << 32 | entry index + 1) in the first free slot from its tag's.
    private mutating func place(_ v: UInt64) {
        let mask = slots.count - 1
        var s = slot(v >> 32)
        while slots[s] != 0 { s = (s + 1) & mask }
        slots[s] = v
    }

    private mutating func clearSlots() {
        slots.withUnsafeMutableBufferPointer { s in
            for i in s.indices { s[i] = 0 }
        }
    }

    /// Reads the slots and records that adding occurrences of these key hashes will touch, all before any is
    /// added, so that their cache misses overlap (as `PurchaseRecordTable.warm`). Changes nothing the store holds.
    mutating func warm(_ hashes: UnsafeBufferPointer<UInt64>) {
        var sum: UInt64 = 0
        let mask = slots.count - 1
        withUnsafeTemporaryAllocation(of: Int.self, capacity: hashes.count) { found in
            var n = 0
            slots.withUnsafeBufferPointer { slots in
                for h in hashes {
                    let tag = h >> 32
                    var s = slot(tag)
                    while slots[s] != 0 {
                        if slots[s] >> 32 == tag {
                            found[n] = Int(truncatingIfNeeded: slots[s] & 0xffff_ffff) - 1
                            n += 1
                            break
                        }
                        s = (s + 1) & mask
                    }
                }
            }
            entries.withUnsafeBufferPointer { entries in
                arena.withUnsafeBytes { a in
                    for k in 0..<n {
                        let e = entries[found[k]]
                        sum &+= UInt64(a[Int(e.offset)]) &+ UInt64(a[Int(e.offset) + Int(e.facts)])
                    }
                }
            }
        }
        warmth = sum
    }
}
