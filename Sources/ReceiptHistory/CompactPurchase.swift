import ReceiptModel

/// The compact form of a purchase record, as the compact table holds it (`CompactPurchaseStore`): its facts, then
/// its merge state.
///
/// The facts: the environment byte, then each fact in visit order. The bundle, product and promotional offer ids
/// are given by their number in the table's dictionary (a varint: 0 for null, the number + 1 otherwise); other
/// byte strings by a varint tag (0 null; 1 a decimal number without leading zeros, whose value follows as a
/// varint; otherwise 2 + the length, then the bytes); numbers as optional zigzag varints, timestamps as the
/// difference from the previous one, booleans as one byte (0 null, 1 false, 2 true). The bytes are a function of
/// the facts' values alone, so two records hold the same facts exactly when their facts' bytes are equal; and the
/// first fields are the key (environment, bundle_id, transaction_id), so a key's bytes are a prefix.
///
/// The merge state (`CompactMergeState`) follows, with room to grow in place.
enum CompactPurchase {
    /// The names of the facts in `PurchaseFacts.visit` order.
    private static let fields: FieldNames = {
        var v = FieldNames()
        var f = PurchaseFacts()
        f.visit(&v)
        return v
    }()

    /// The text fields in visit order.
    private static var textFields: [String] { fields.texts }

    /// How many facts, in visit order, hold everything a record's order key is made of (`PurchaseRecord
    /// .appendOrderKey`: the key, the original transaction id and the purchase date); `decodeFacts` can stop there.
    static let orderFields: Int = {
        let used = ["bundle_id", "transaction_id", "original_transaction_id", "purchase_date"]
        return used.map { n in fields.all.firstIndex(of: n).map { $0 + 1 } ?? fields.all.count }.max()!
    }()

    /// Bit i set: the i-th text field is coded by the dictionary (strings that many purchases share).
    static let codedFields: UInt64 = {
        var mask: UInt64 = 0
        for (i, n) in textFields.enumerated()
        where ["bundle_id", "product_id", "promotional_offer_id"].contains(n) {
            mask |= 1 << UInt64(i)
        }
        return mask
    }()

    /// The text field after which the key is complete: the transaction id, which the visit gives right after the
    /// bundle id, before any other fact.
    static let keyField: Int = {
        precondition(
            Array(textFields.prefix(2)) == ["bundle_id", "transaction_id"],
            "the key's fields must come first in the facts' visit")
        return 1
    }()

    @inline(__always)
    static func isCoded(_ field: Int) -> Bool { field < 64 && codedFields & (1 << UInt64(field)) != 0 }

    /// The value of `b` when it is a decimal number written as a number would be (1 to 19 digits, no leading
    /// zero), so that writing the value back gives the same bytes.
    @inline(__always)
    static func number(_ b: UnsafeRawBufferPointer) -> UInt64? {
        guard b.count >= 1 && b.count <= 19, b.count == 1 || b[0] != 0x30 else { return nil }
        var v: UInt64 = 0
        for c in b {
            guard c >= 0x30 && c <= 0x39 else { return nil }
            v = v &* 10 &+ UInt64(c &- 0x30)
        }
        return v
    }

    /// Appends the decimal digits of `v` to `out`.
    static func appendDigits(_ v: UInt64, to out: inout [UInt8]) {
        // Written from the last digit back into a 20-byte buffer (UInt64.max has 20 digits), then appended at once.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { d in
            var at = d.count
            var x = v
            repeat {
                at -= 1
                d[at] = UInt8(truncatingIfNeeded: x % 10) &+ 0x30
                x /= 10
            } while x > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: d[at...]))
        }
    }

    /// Appends the facts of a record (its facts `facts`, their byte strings in `text`) to `w`; returns how many
    /// bytes of the key they begin with. The dictionary numbers strings it has not seen.
    static func encodeFacts(
        _ facts: PurchaseFacts, text: UnsafeRawBufferPointer, into w: inout SpillWriter,
        dictionary: inout TextDictionary
    ) -> Int {
        let start = w.bytes.count
        w.u8(facts.environment.rawValue)
        var e = CompactFactsEncoder(w: SpillWriter(), dictionary: TextDictionary(), text: text)
        swap(&e.w, &w)
        swap(&e.dictionary, &dictionary)
        var f = facts
        f.visit(&e)
        swap(&e.w, &w)
        swap(&e.dictionary, &dictionary)
        return e.keyEnd - start
    }

    /// The facts at the start of `r`, their byte strings appended to `text`; nil when the bytes are not facts this
    /// table wrote. With `fields`, only the first `fields` facts in visit order are read (the others stay unset,
    /// and `r` is left inside the facts).
    static func decodeFacts(
        _ r: inout SpillReader, dictionary: TextDictionary, text: inout [UInt8], fields: Int = .max
    ) -> PurchaseFacts? {
        guard let raw = try? r.u8(), let environment = HistoryEnvironment(rawValue: raw) else { return nil }
        var d = CompactFactsDecoder(r: r, dictionary: dictionary, text: [], fields: fields)
        swap(&d.text, &text)
        var facts = PurchaseFacts()
        facts.visit(&d)
        swap(&d.text, &text)
        r = d.r
        guard !d.failed else { return nil }
        facts.environment = environment
        return facts
    }
}

/// Collects the names of the facts, and of the text facts apart, in visit order.
private struct FieldNames: PurchaseFactVisitor {
    var all: [String] = []
    var texts: [String] = []
    mutating func text(_ name: StaticString, _ v: inout TextSpan) { add(name, text: true) }
    mutating func text(_ name: StaticString, _ v: inout TextSpan?) { add(name, text: true) }
    mutating func int32(_ name: StaticString, _ v: inout Int32?) { add(name) }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { add(name) }
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { add(name) }
    mutating func bool(_ name: StaticString, _ v: inout Bool?) { add(name) }

    private mutating func add(_ name: StaticString, text: Bool = false) {
        all.append("\(name)")
        if text { texts.append("\(name)") }
    }
}

/// Writes the facts as `CompactPurchase` lays them out.
private struct CompactFactsEncoder: PurchaseFactVisitor {
    var w: SpillWriter
    var dictionary: TextDictionary
    let text: UnsafeRawBufferPointer
    /// The bytes written when the key was complete.
    private(set) var keyEnd = 0
    private var field = 0
    private var base: Int64 = 0

    init(w: SpillWriter, dictionary: TextDictionary, text: UnsafeRawBufferPointer) {
        self.w = w
        self.dictionary = dictionary
        self.text = text
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan) { put(v) }
    mutating func text(_ name: StaticString, _ v: inout TextSpan?) { put(v) }

    @inline(__always)
    private mutating func put(_ v: TextSpan?) {
        let k = field
        field += 1
        defer { if k == CompactPurchase.keyField { keyEnd = w.bytes.count } }
        guard let s = v else { return w.u8(0) }
        let b = text.span(s)
        if CompactPurchase.isCoded(k) {
            w.varint(UInt64(dictionary.code(b, field: k & 7)) + 1)
        } else if let n = CompactPurchase.number(b) {
            w.u8(1)
            w.varint(n)
        } else {
            w.varint(UInt64(b.count) + 2)
            w.bytes.append(contentsOf: b)
        }
    }

    mutating func int32(_ name: StaticString, _ v: inout Int32?) { w.optional(v.map { Int64($0) }) }
    mutating func int64(_ name: StaticString, _ v: inout Int64?) { w.optional(v) }

    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) { w.timestamp(v, after: &base) }

    mutating func bool(_ name: StaticString, _ v: inout Bool?) { w.bool(v) }
}

/// Reads what `CompactFactsEncoder` wrote.
private struct CompactFactsDecoder: PurchaseFactVisitor {
    var r: SpillReader
    let dictionary: TextDictionary
    var text: [UInt8]
    private(set) var failed = false
    private var field = 0
    private var base: Int64 = 0
    /// Facts left to read; the rest are skipped.
    private var left: Int

    init(r: SpillReader, dictionary: TextDictionary, text: [UInt8], fields: Int) {
        self.r = r
        self.dictionary = dictionary
        self.text = text
        left = fields
    }

    /// Whether the next fact is read (counting it).
    @inline(__always)
    private mutating func reads() -> Bool {
        guard left > 0 else { return false }
        left -= 1
        return true
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan) {
        guard reads() else { return }
        guard let s = take() else {
            failed = true
            return
        }
        v = s
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan?) {
        guard reads() else { return }
        v = take()
    }

    private mutating func take() -> TextSpan? {
        let k = field
        field += 1
        guard !failed else { return nil }
        do throws(HistoryError) {
            let tag = try r.varint()
            if tag == 0 { return nil }
            let at = text.count
            if CompactPurchase.isCoded(k) {
                guard tag <= UInt64(Int32.max), dictionary.append(Int(tag - 1), to: &text) else {
                    failed = true
                    return nil
                }
            } else if tag == 1 {
                CompactPurchase.appendDigits(try r.varint(), to: &text)
            } else {
                guard tag - 2 <= UInt64(Int32.max) else {
                    failed = true
                    return nil
                }
                text.append(contentsOf: try r.bytes(Int(tag - 2)))
            }
            return TextSpan(offset: Int32(at), count: Int32(text.count - at))
        } catch {
            failed = true
            return nil
        }
    }

    mutating func int32(_ name: StaticString, _ v: inout Int32?) {
        guard reads() else { return }
        guard let n = read({ r throws(HistoryError) in try r.optional() }) else { return v = nil }
        guard let narrow = Int32(exactly: n) else {
            failed = true
            return
        }
        v = narrow
    }

    mutating func int64(_ name: StaticString, _ v: inout Int64?) {
        guard reads() else { return }
        v = read { r throws(HistoryError) in try r.optional() }
    }

    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) {
        guard reads() else { return }
        guard let d = read({ r throws(HistoryError) in try r.optional() }) else { return v = nil }
        base = base &+ d
        v = base
    }

    mutating func bool(_ name: StaticString, _ v: inout Bool?) {
        guard reads() else { return }
        v = read { r throws(HistoryError) in try r.optionalBool() }
    }

    private mutating func read<T>(_ body: (inout SpillReader) throws(HistoryError) -> T?) -> T? {
        guard !failed else { return nil }
        do throws(HistoryError) {
            return try body(&r)
        } catch {
            failed = true
            return nil
        }
    }
}

/// What a purchase record holds besides its facts: the recency its facts come from, the occurrences, the seen
/// dates and the recencies of the cancellation, user id and token. Written after the facts as a flags byte (1
/// dated, 2 cancelled, 4 user id, 8 token) and zigzag varints: the newest recency, the occurrences, first seen and
/// last seen minus first seen when dated, and each flagged recency.
struct CompactMergeState: Equatable {
    var newest: Recency
    var occurrences: Int64
    var firstSeen: Int64?
    var lastSeen: Int64?
    var cancelledAt: Recency?
    var userAt: Recency?
    var tokenAt: Recency?

    init(_ r: PurchaseRecord) {
        newest = r.newest
        occurrences = r.occurrences
        firstSeen = r.firstSeen
        lastSeen = r.lastSeen
        cancelledAt = r.cancelledAt
        userAt = r.userAt
        tokenAt = r.tokenAt
    }

    /// The state of a record of the single occurrence `o`, of recency `recency`.
    init(_ o: PurchaseOccurrence, recency: Recency) {
        newest = recency
        occurrences = 1
        firstSeen = o.created
        lastSeen = o.created
        cancelledAt = o.facts.cancellationDate == nil ? nil : recency
        userAt = o.facts.userID == nil ? nil : recency
        tokenAt = o.facts.appAccountToken == nil ? nil : recency
    }

    private init(newest: Recency, occurrences: Int64) {
        self.newest = newest
        self.occurrences = occurrences
    }

    /// Merges occurrence `o` (of recency `recency`) of a record whose facts are the occurrence's own: the facts
    /// stay, and the state moves as `PurchaseRecord.merge` moves it.
    mutating func merge(_ o: PurchaseOccurrence, recency: Recency) {
        if newest < recency { newest = recency }
        occurrences += 1
        if let c = o.created {
            firstSeen = min(firstSeen ?? c, c)
            lastSeen = max(lastSeen ?? c, c)
        }
        if o.facts.cancellationDate != nil { cancelledAt = Self.newer(cancelledAt, recency) }
        if o.facts.userID != nil { userAt = Self.newer(userAt, recency) }
        if o.facts.appAccountToken != nil { tokenAt = Self.newer(tokenAt, recency) }
    }

    @inline(__always)
    private static func newer(_ a: Recency?, _ b: Recency) -> Recency {
        guard let a else { return b }
        return a < b ? b : a
    }

    /// The record of facts `facts` (their byte strings in `text`) in this state.
    func record(_ facts: PurchaseFacts, text: [UInt8]) -> PurchaseRecord {
        var r = PurchaseRecord(
            facts: facts, text: text, newest: newest, cancelledAt: cancelledAt, firstSeen: firstSeen,
            lastSeen: lastSeen, occurrences: occurrences)
        r.userAt = userAt
        r.tokenAt = tokenAt
        return r
    }

    func encode(into w: inout SpillWriter) {
        let dated = firstSeen != nil && lastSeen != nil
        var flags: UInt8 = dated ? 1 : 0
        if cancelledAt != nil { flags |= 2 }
        if userAt != nil { flags |= 4 }
        if tokenAt != nil { flags |= 8 }
        w.u8(flags)
        Self.encode(newest, into: &w)
        w.zigzag(occurrences)
        if dated, let f = firstSeen, let l = lastSeen {
            w.zigzag(f)
            w.zigzag(l &- f)
        }
        if let r = cancelledAt { Self.encode(r, into: &w) }
        if let r = userAt { Self.encode(r, into: &w) }
        if let r = tokenAt { Self.encode(r, into: &w) }
    }

    private static func encode(_ r: Recency, into w: inout SpillWriter) {
        w.zigzag(r.created)
        w.zigzag(r.input)
        w.zigzag(r.line)
        w.zigzag(r.entry)
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> CompactMergeState {
        let flags = try r.u8()
        var s = CompactMergeState(newest: try decodeRecency(&r), occurrences: try r.zigzag())
        if flags & 1 != 0 {
            let f = try r.zigzag()
            s.firstSeen = f
            s.lastSeen = f &+ (try r.zigzag())
        }
        if flags & 2 != 0 { s.cancelledAt = try decodeRecency(&r) }
        if flags & 4 != 0 { s.userAt = try decodeRecency(&r) }
        if flags & 8 != 0 { s.tokenAt = try decodeRecency(&r) }
        return s
    }

    private static func decodeRecency(_ r: inout SpillReader) throws(HistoryError) -> Recency {
        Recency(created: try r.zigzag(), input: try r.zigzag(), line: try r.zigzag(), entry: try r.zigzag())
    }
}
