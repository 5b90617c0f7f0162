import Foundation
import ReceiptModel

/// The key of a `purchases` row: environment, bundle_id and transaction_id, read in a record's text (equal and
/// hashed by those bytes only).
struct PurchaseKey: Hashable, Sendable {
    var environment: UInt8
    var text: [UInt8]
    var bundleID: TextSpan
    var transactionID: TextSpan

    func hash(into h: inout Hasher) {
        h.combine(environment)
        text.withUnsafeBytes { t in
            h.combine(bytes: t.span(bundleID))
            h.combine(Int(bundleID.count))
            h.combine(bytes: t.span(transactionID))
        }
    }

    static func == (a: PurchaseKey, b: PurchaseKey) -> Bool {
        guard a.environment == b.environment else { return false }
        return a.text.withUnsafeBytes { x in
            b.text.withUnsafeBytes { y in
                equalBytes(x.span(a.bundleID), y.span(b.bundleID))
                    && equalBytes(x.span(a.transactionID), y.span(b.transactionID))
            }
        }
    }
}

/// One `purchases` row in the making: the merge of one or more occurrences of the same key.
///
/// `facts` are the newest occurrence's (its byte strings in `text`), but for the cancellation pair, which is the
/// newest cancelled occurrence's, and the user id and app account token, each the newest occurrence's that has
/// one. `merge` is associative and commutative (the newest occurrence wins by the total recency order, counts
/// add, dates take their min and max, "several user ids" is an or), so the result does not depend on the order
/// occurrences meet in: not on threads, batch sizes, spill partitions or resumed parts.
///
/// "Several user ids" needs no set of ids: a merged side whose flag is false carries one distinct id at most (its
/// newest), so two sides together carry two or more exactly when either side's flag is set or their ids differ.
///
/// `visit` declares the row: every column in order, with where its value lives; the table schema, the spill
/// encoding and the row writer follow from it (`PurchaseColumns`).
struct PurchaseRecord: Sendable {
    var facts: PurchaseFacts
    /// The byte strings `facts` spans.
    var text: [UInt8]
    /// Recency of the occurrence the facts come from (its input and line give `source` and `line`).
    var newest: Recency
    /// The recencies of the cancellation pair, the user id and the app account token, held apart since most
    /// purchases have none of them (nil when none has one).
    private var overlay: PurchaseOverlay? = nil
    /// Min and max receipt creation date over the occurrences: `Int64.max` and `Int64.min` (the identities of min
    /// and max, and the only pair with the first after the last) when none was dated.
    private var earliest = Int64.max
    private var latest = Int64.min
    var occurrences: Int64

    /// The newest occurrence that had a cancellation date (the cancellation pair of `facts` is its).
    var cancelledAt: Recency? {
        get { overlay?.cancelledAt }
        set {
            guard let r = newValue else {
                if overlay?.cancelledAt != nil { clearOverlay(\.cancelledAt) }
                return
            }
            if overlay?.cancelledAt != r { writableOverlay().cancelledAt = r }
        }
    }

    /// The newest occurrences that had a user id and an app account token (`facts.userID` and
    /// `facts.appAccountToken` are theirs).
    var userAt: Recency? {
        get { overlay?.userAt }
        set {
            guard let r = newValue else {
                if overlay?.userAt != nil { clearOverlay(\.userAt) }
                return
            }
            if overlay?.userAt != r { writableOverlay().userAt = r }
        }
    }

    var tokenAt: Recency? {
        get { overlay?.tokenAt }
        set {
            guard let r = newValue else {
                if overlay?.tokenAt != nil { clearOverlay(\.tokenAt) }
                return
            }
            if overlay?.tokenAt != r { writableOverlay().tokenAt = r }
        }
    }

    /// Min and max receipt creation date over the occurrences (nil when none was dated).
    var firstSeen: Int64? {
        get { earliest <= latest ? earliest : nil }
        set { earliest = newValue ?? Int64.max }
    }

    var lastSeen: Int64? {
        get { earliest <= latest ? latest : nil }
        set { latest = newValue ?? Int64.min }
    }

    /// The overlay, made or copied so that this record holds it alone.
    private mutating func writableOverlay() -> PurchaseOverlay {
        if overlay == nil {
            overlay = PurchaseOverlay()
        } else if !isKnownUniquelyReferenced(&overlay) {
            overlay = overlay!.copy()
        }
        return overlay!
    }

    /// Counts a dated occurrence (or merged dates) into `first_seen` and `last_seen`.
    @inline(__always)
    mutating func see(_ first: Int64, _ last: Int64) {
        earliest = min(earliest, first)
        latest = max(latest, last)
    }

    /// The record of a single occurrence of `feed`, from input `input`.
    init(_ o: PurchaseOccurrence, input: Int, text: UnsafeRawBufferPointer) {
        let recency = Self.recency(o, input: input)
        facts = o.facts
        if facts.cancellationDate == nil { facts.cancellationReason = nil }
        self.text = Array(text)
        newest = recency
        occurrences = 1
        if o.facts.cancellationDate != nil { cancelledAt = recency }
        if o.facts.userID != nil { userAt = recency }
        if o.facts.appAccountToken != nil { tokenAt = recency }
        if let c = o.created { see(c, c) }
    }

    init(
        facts: PurchaseFacts, text: [UInt8], newest: Recency, cancelledAt: Recency?, firstSeen: Int64?,
        lastSeen: Int64?, occurrences: Int64
    ) {
        self.facts = facts
        self.text = text
        self.newest = newest
        self.occurrences = occurrences
        self.cancelledAt = cancelledAt
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }

    /// Moves the input index of every recency the record holds by `shift`: a base's records, when its inputs are
    /// numbered after those of the chains before it.
    mutating func shiftInputs(by shift: Int64) {
        newest.input += shift
        if var r = cancelledAt {
            r.input += shift
            cancelledAt = r
        }
        if var r = userAt {
            r.input += shift
            userAt = r
        }
        if var r = tokenAt {
            r.input += shift
            tokenAt = r
        }
    }

    static func recency(_ o: PurchaseOccurrence, input: Int) -> Recency {
        Recency(created: o.created ?? Int64.min, input: Int64(input), line: o.line, entry: o.entry)
    }

    var key: PurchaseKey {
        PurchaseKey(
            environment: facts.environment.rawValue, text: text, bundleID: facts.bundleID,
            transactionID: facts.transactionID)
    }

    mutating func merge(_ o: PurchaseRecord) {
        o.text.withUnsafeBytes { t in
            merge(
                o.facts, text: t, newest: o.newest, cancelledAt: o.cancelledAt, userAt: o.userAt,
                tokenAt: o.tokenAt, firstSeen: o.firstSeen, lastSeen: o.lastSeen, occurrences: o.occurrences)
        }
    }

    /// Merges occurrence `o` (of input `input`, its text `text`) of the same key.
    mutating func merge(_ o: PurchaseOccurrence, input: Int, text: UnsafeRawBufferPointer) {
        let recency = Self.recency(o, input: input)
        if mergeRepeat(o, recency: recency, text: text) { return }
        mergeChanged(o, recency: recency, text: text)
    }

    /// The full merge of occurrence `o` (recency `recency`, its text `text`) of the same key, for one that
    /// `mergeRepeat` did not take (the result is the same either way).
    mutating func mergeChanged(_ o: PurchaseOccurrence, recency: Recency, text: UnsafeRawBufferPointer) {
        merge(
            o.facts, text: text, newest: recency, cancelledAt: o.facts.cancellationDate == nil ? nil : recency,
            userAt: o.facts.userID == nil ? nil : recency, tokenAt: o.facts.appAccountToken == nil ? nil : recency,
            firstSeen: o.created, lastSeen: o.created, occurrences: 1)
    }

    /// The merge: of another record, or of one occurrence (`occurrences` 1, seen and cancelled at its recency).
    /// The text is copied only when the newer facts' bytes differ from the ones held.
    private mutating func merge(
        _ f: PurchaseFacts, text t: UnsafeRawBufferPointer, newest n: Recency, cancelledAt c: Recency?,
        userAt u: Recency?, tokenAt k: Recency?, firstSeen: Int64?, lastSeen: Int64?, occurrences count: Int64
    ) {
        occurrences += count
        if let firstSeen, let lastSeen { see(firstSeen, lastSeen) }
        var cancellation = (cancelledAt, facts.cancellationDate, facts.cancellationReason)
        if let c, cancelledAt.map({ $0 < c }) ?? true { cancellation = (c, f.cancellationDate, f.cancellationReason) }
        let multiple = mergedMultipleUserIDs(f, t)
        // Whether the other side's user id and token are the newer ones.
        let takeUser = u.map { u in userAt.map { $0 < u } ?? true } ?? false
        let takeToken = k.map { k in tokenAt.map { $0 < k } ?? true } ?? false
        if newest < n {
            // Ours that stay move into the new text (copied before it replaces ours).
            let keptUser = takeUser ? nil : facts.userID.map { bytes($0) }
            let keptToken = takeToken ? nil : facts.appAccountToken.map { bytes($0) }
            newest = n
            facts = f
            let prefix = text.count >= t.count && text.withUnsafeBytes { equalBytes($0.span(0, t.count), t) }
            if prefix { text.removeLast(text.count - t.count) } else { text = Array(t) }
            if let keptUser { facts.userID = keptUser.withUnsafeBytes { appendText($0) } }
            if let keptToken { facts.appAccountToken = keptToken.withUnsafeBytes { appendText($0) } }
        } else {
            if takeUser, let s = f.userID { facts.userID = adopt(t.span(s), replacing: facts.userID) }
            if takeToken, let s = f.appAccountToken {
                facts.appAccountToken = adopt(t.span(s), replacing: facts.appAccountToken)
            }
            if text.count > Self.compactAbove { compact() }
        }
        if takeUser { userAt = u }
        if takeToken { tokenAt = k }
        facts.multipleUserIDs = multiple
        (cancelledAt, facts.cancellationDate, facts.cancellationReason) = cancellation
    }

    /// `multiple_user_ids` of the merge with facts `f` (text `t`): either side's flag, or two different ids.
    func mergedMultipleUserIDs(_ f: PurchaseFacts, _ t: UnsafeRawBufferPointer) -> Bool? {
        guard let b = f.multipleUserIDs else { return facts.multipleUserIDs }
        guard let a = facts.multipleUserIDs else { return b }
        if a || b { return true }
        guard let x = facts.userID, let y = f.userID else { return false }
        return text.withUnsafeBytes { !equalBytes($0.span(x), t.span(y)) }
    }

    /// Appends `b` to the text; its span.
    private mutating func appendText(_ b: UnsafeRawBufferPointer) -> TextSpan {
        let s = TextSpan(offset: Int32(text.count), count: Int32(b.count))
        text.append(contentsOf: b)
        return s
    }

    /// The span of `b` in the text: `held`'s when it holds the same bytes, else `b` appended (the bytes `held`
    /// named stay until the text is compacted).
    private mutating func adopt(_ b: UnsafeRawBufferPointer, replacing held: TextSpan?) -> TextSpan {
        if let held, text.withUnsafeBytes({ equalBytes($0.span(held), b) }) { return held }
        return appendText(b)
    }

    /// The text length above which a merge drops the bytes no fact names, so that a purchase seen with many user
    /// ids in an adverse order does not keep them all.
    static let compactAbove = 1024

    /// Rebuilds the text from the byte strings the facts name.
    private mutating func compact() {
        var spans = TextCompactor(old: text)
        facts.visit(&spans)
        text = spans.new
    }

    /// Approximate heap bytes while held in a dictionary (the value, its slack and what it allocated).
    var estimatedBytes: Int { 2 * MemoryLayout<PurchaseRecord>.stride + heapBytes }

    /// The bytes the record allocated: its text's storage and its overlay's.
    var heapBytes: Int { text.storageBytes + (overlay == nil ? 0 : PurchaseOverlay.heapBytes) }

    /// Sets the overlay's `field` to nil, dropping the overlay when it then holds nothing. The setters call it only
    /// when the field is set: forming a key path is a call into the runtime, and most records have no overlay.
    private mutating func clearOverlay(_ field: ReferenceWritableKeyPath<PurchaseOverlay, Recency?>) {
        guard let o = overlay, o[keyPath: field] != nil else { return }
        writableOverlay()[keyPath: field] = nil
        if let o = overlay, o.cancelledAt == nil, o.userAt == nil, o.tokenAt == nil { overlay = nil }
    }

    func partition(_ count: Int, seed: UInt64) -> Int {
        text.withUnsafeBytes { t in
            Int(
                stableHash(facts.environment.rawValue, t.span(facts.bundleID), t.span(facts.transactionID), seed: seed)
                    % UInt64(count))
        }
    }

    /// The bytes of `s` in the text (copied).
    func bytes(_ s: TextSpan) -> [UInt8] { text.withUnsafeBytes { Array($0.span(s)) } }
    func bytes(_ s: TextSpan?) -> [UInt8]? { s.map(bytes) }

    /// The row order of `purchases`: environment, bundle_id, original_transaction_id (null first),
    /// purchase_date (null first), transaction_id; strings bytewise.
    static func precedes(_ a: PurchaseRecord, _ b: PurchaseRecord) -> Bool {
        if a.facts.environment != b.facts.environment {
            return a.facts.environment.rawValue < b.facts.environment.rawValue
        }
        return a.text.withUnsafeBytes { x in
            b.text.withUnsafeBytes { y in
                let c = compareBytes(x.span(a.facts.bundleID), y.span(b.facts.bundleID))
                if c != 0 { return c < 0 }
                switch (a.facts.originalTransactionID, b.facts.originalTransactionID) {
                case (nil, .some): return true
                case (.some, nil): return false
                case (let p?, let q?):
                    let c = compareBytes(x.span(p), y.span(q))
                    if c != 0 { return c < 0 }
                case (nil, nil): break
                }
                let pa = a.facts.purchaseDate
                let pb = b.facts.purchaseDate
                if (pa == nil) != (pb == nil) { return pa == nil }
                if let pa, let pb, pa != pb { return pa < pb }
                return compareBytes(x.span(a.facts.transactionID), y.span(b.facts.transactionID)) < 0
            }
        }
    }
}

/// Visits a whole `purchases` row: the facts' columns, and the columns and state the record adds.
protocol PurchaseRecordVisitor: PurchaseFactVisitor {
    mutating func environment(_ name: StaticString, _ v: inout HistoryEnvironment)
    /// A non-null int64 column.
    mutating func count(_ name: StaticString, _ v: inout Int64)
    /// The `source` column: the name of input `v`.
    mutating func source(_ name: StaticString, _ v: inout Int64)
    /// State the merge needs that is no column.
    mutating func state(_ v: inout Int64)
    mutating func state(_ v: inout Recency?)
    /// State that is a time (epoch milliseconds; `Int64.min` for none).
    mutating func stateTime(_ v: inout Int64)
}

extension PurchaseRecordVisitor {
    mutating func stateTime(_ v: inout Int64) { state(&v) }
}

extension PurchaseRecord {
    /// The `purchases` row, column by column in order, then the state that is not a column.
    @inline(__always)
    mutating func visit<V: PurchaseRecordVisitor>(_ v: inout V) {
        v.environment("environment", &facts.environment)
        facts.visit(&v)
        v.timestamp("first_seen", &firstSeen)
        v.timestamp("last_seen", &lastSeen)
        v.count("occurrences", &occurrences)
        v.source("source", &newest.input)
        v.count("line", &newest.line)
        v.stateTime(&newest.created)
        v.state(&newest.entry)
        v.state(&cancelledAt)
        v.state(&userAt)
        v.state(&tokenAt)
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes of `s` (a span made for this buffer: in range, unless a spilled record was damaged, which
    /// decoding refuses).
    @inline(__always)
    func span(_ s: TextSpan) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self[Int(s.offset)..<(Int(s.offset) + Int(s.count))])
    }

    /// The bytes `offset..<offset + count` (in range).
    @inline(__always)
    func span(_ offset: Int, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self[offset..<(offset + count)])
    }
}

@inline(__always)
func equalBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
}

/// Copies the byte strings the facts name into a new text, in visit order, and points the facts at them.
private struct TextCompactor: PurchaseFactVisitor {
    let old: [UInt8]
    var new: [UInt8] = []

    mutating func text(_ name: StaticString, _ v: inout TextSpan) {
        let s = v
        v = TextSpan(offset: Int32(new.count), count: s.count)
        new.append(contentsOf: old[Int(s.offset)..<(Int(s.offset) + Int(s.count))])
    }

    mutating func text(_ name: StaticString, _ v: inout TextSpan?) {
        guard var s = v else { return }
        text(name, &s)
        v = s
    }

    mutating func int32(_ name: StaticString, _ v: inout Int32?) {}
    mutating func int64(_ name: StaticString, _ v: inout Int64?) {}
    mutating func timestamp(_ name: StaticString, _ v: inout Int64?) {}
    mutating func bool(_ name: StaticString, _ v: inout Bool?) {}
}

extension [UInt8] {
    /// Approximate heap bytes of the array's storage: a 32-byte header, the capacity and the allocator's overhead;
    /// none while it has no storage of its own.
    var storageBytes: Int { capacity == 0 ? 0 : 48 + capacity }
}
