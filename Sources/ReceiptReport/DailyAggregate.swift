import Glibc
import ReceiptModel

/// The report's aggregates of a `daily` table: per day, the active subscriptions of each product; per month, the
/// event counts. Products are numbered by their name's bytes, so that a row is counted without making a `String`
/// or hashing one; a product's name is made once, when its bytes are first seen.
///
/// Bounded like the rest of the report: at most `maxDays` days and `ReportData.maxKeys` products a day (a row
/// beyond either is left out, its events too).
struct DailyAggregate {
    static let maxDays = 100_000

    /// One day: its products' active counts, in the order first seen.
    struct Day {
        var day: Int64
        var products: [Int] = []
        var active: [Int] = []
    }

    /// Product names by number (distinct).
    private(set) var names: [String] = []
    private var numberOfName: [String: Int] = [:]
    private var numberOfBytes: [ByteKey: Int] = [:]
    /// Per product number: the bytes it was first found by (`number`'s key), and the number of the product that
    /// followed it in the last day it was counted on (-1: none yet).
    private var keyOfNumber: [[UInt8]] = []
    private var successor: [Int] = []
    private var scratch = ByteKey()
    private(set) var days: [Day] = []
    private var slotOfDay: [Int64: Int] = [:]
    /// The day of the last row counted, its slot, and the number of the last product counted (-1: none).
    private var last: (day: Int64, slot: Int, product: Int) = (0, -1, -1)
    /// The number of the first product of the last day counted (-1: none).
    private var firstOfLastDay = -1
    /// Per product number: the day slot and position it was last counted at (a product comes once a day).
    private var lastSeen: [(slot: Int, position: Int)] = []
    /// Whether a row came for a day before the newest one (then `lastSeen` no longer tells a day's products).
    private var revisited = false
    /// Per month, the five event counts of `ReportAggregator.dailyCounts`: their slot in `monthCounts`.
    private var monthSlot: [Int64: Int] = [:]
    private var monthCounts: [[Int]] = []
    /// The month of the last row counted and its slot (-1: none).
    private var lastMonth: (month: Int64, slot: Int) = (0, -1)

    /// Per month, the five event counts of `ReportAggregator.dailyCounts`.
    var months: [Int64: [Int]] { monthSlot.mapValues { monthCounts[$0] } }

    /// Counts row `row` of a `daily` table: its day, month, product (`products`' value), active count and event
    /// counts (a missing column counts 0).
    mutating func add(
        day: Int64, month: Int64, products: StringColumn, row: Int, active: Int, events: [PrimitiveColumn<Int64>?]
    ) {
        let slot: Int
        let sameDay = last.slot >= 0 && last.day == day
        if sameDay {
            slot = last.slot
        } else if let s = slotOfDay[day] {
            slot = s
            if s != days.count - 1 { revisited = true }
        } else {
            guard days.count < Self.maxDays else { return }
            slot = days.count
            days.append(Day(day: day))
            slotOfDay[day] = slot
        }
        // Rows come day by day, each day's products in one order: the product is most often the one that followed
        // the last product the last time, or the first product of the day before.
        let guess = sameDay ? (last.product >= 0 ? successor[last.product] : -1) : firstOfLastDay
        let p = number(products, row, guess: guess)
        if sameDay {
            if last.product >= 0 { successor[last.product] = p }
        } else {
            firstOfLastDay = p
        }
        last = (day, slot, p)
        let position: Int
        if let i = find(p, in: slot) {
            position = i
        } else {
            guard days[slot].products.count < ReportData.maxKeys else { return }
            position = days[slot].products.count
            days[slot].products.append(p)
            days[slot].active.append(0)
        }
        lastSeen[p] = (slot, position)
        days[slot].active[position] += active
        let m: Int
        if lastMonth.slot >= 0 && lastMonth.month == month {
            m = lastMonth.slot
        } else if let known = monthSlot[month] {
            m = known
        } else {
            m = monthCounts.count
            monthSlot[month] = m
            monthCounts.append(Array(repeating: 0, count: events.count))
        }
        lastMonth = (month, m)
        // By index: a column read in place is not copied out of the array (which would retain its storage).
        for i in events.indices { monthCounts[m][i] += Int(events[i]?[row] ?? 0) }
    }

    /// The position of product `p` in day `slot`, if it was counted there.
    private func find(_ p: Int, in slot: Int) -> Int? {
        // Rows come day by day: a product last counted on another day is new to this one, unless some day came
        // back after a later one (then the day's products are searched).
        guard revisited else {
            let last = lastSeen[p]
            return last.slot == slot ? last.position : nil
        }
        return days[slot].products.firstIndex(of: p)
    }

    /// The number of row `r`'s product (null and empty are the same product, named ""; a name is cut at
    /// `ReportData.maxValueBytes`, as `ReportAggregator.text` cuts it). `guess` (-1: none) is checked first, by
    /// its bytes, before the bytes are looked up.
    private mutating func number(_ c: StringColumn, _ r: Int, guess: Int) -> Int {
        if guess >= 0 && isKey(guess, of: c, r) { return guess }
        scratch.bytes.removeAll(keepingCapacity: true)
        if c.valid[r] {
            c.withBytes(r) { b in
                scratch.bytes.append(contentsOf: b.prefix(ReportData.maxValueBytes))
                // A cut name is longer than any whole one kept.
                if b.count > ReportData.maxValueBytes { scratch.bytes.append(0) }
            }
        }
        if let n = numberOfBytes[scratch] { return n }
        let name = ReportAggregator.text(c, r) ?? ""
        let n: Int
        if let known = numberOfName[name] {
            n = known
        } else {
            n = names.count
            names.append(name)
            numberOfName[name] = n
            lastSeen.append((-1, 0))
            keyOfNumber.append(scratch.bytes)
            successor.append(-1)
        }
        numberOfBytes[ByteKey(bytes: scratch.bytes)] = n
        return n
    }
}

extension DailyAggregate {
    /// Whether the bytes of row `r` of `c` are product `n`'s key (a null row's key is empty).
    fileprivate func isKey(_ n: Int, of c: StringColumn, _ r: Int) -> Bool {
        keyOfNumber[n].withUnsafeBytes { key in
            guard c.valid[r] else { return key.isEmpty }
            return c.withBytes(r) { b in
                key.count == b.count && (b.isEmpty || memcmp(key.baseAddress!, b.baseAddress!, b.count) == 0)
            }
        }
    }
}

/// Bytes as a dictionary key, hashed as one block.
private struct ByteKey: Hashable {
    var bytes: [UInt8] = []

    func hash(into h: inout Hasher) {
        bytes.withUnsafeBytes { h.combine(bytes: $0) }
        h.combine(bytes.count)
    }
}
