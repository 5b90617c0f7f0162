import ReceiptModel

// MARK: - ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }, and its values

/// One attribute located in the payload.
public struct AttributeSlot: Sendable {
    public var type: Int
    public var version: Int
    /// Contents of the value OCTET STRING.
    public var value: Range<Int>
    public var start: Int
}

extension BERReader {
    /// Calls `body` for each ReceiptAttribute of a SET, in payload order.
    ///
    /// Each attribute is first tried in `attributeFast`, which only accepts the short DER shape receipts are made
    /// of and returns nil for anything else; `attributeSlow` then reads it element by element and throws the
    /// precise error. Both give the same slot for every input the fast path accepts.
    @inline(__always)
    func forEachAttribute(
        in set: BERElement, depth: Int, _ body: (AttributeSlot) throws(ReceiptError) -> Void
    ) throws(ReceiptError) {
        var c = try attributes(in: set, depth: depth)
        while let a = try nextAttribute(&c) { try body(a) }
    }

    /// Where a walk over a SET's attributes stands (`attributes(in:depth:)`, `nextAttribute`).
    struct AttributeCursor {
        var p: Int
        let end: Int
        /// attributeShort reads 16 octets at p: p <= wordsEnd. Without the fast paths no p passes (p >= 0).
        let wordsEnd: Int
        let fast: Bool
        let depth: Int
    }

    /// `forEachAttribute` as a cursor, for a loop that keeps its body in place (the compiler left the app-level
    /// loop's closure out of line, a call per attribute): checks the SET, then `nextAttribute` reads each one.
    @inline(__always)
    func attributes(in set: BERElement, depth: Int) throws(ReceiptError) -> AttributeCursor {
        guard set.identifier == BERTag.set else {
            throw ReceiptError(.malformedDER, at: set.start, "the receipt payload is not a SET of attributes")
        }
        // A SET identifier is constructed, so only the depth check of `forEachChild` remains.
        guard depth < maxDepth else {
            throw ReceiptError(.limitExceeded, at: set.start, "elements are nested deeper than the limit")
        }
        // The slow path checks the depth of the attribute's children (`depth + 1`); the fast path only runs when
        // that check would pass, and reads nothing that could nest deeper.
        let fast = fastPaths && depth + 1 < maxDepth
        return AttributeCursor(
            p: set.contentStart, end: set.contentEnd, wordsEnd: fast ? bytes.count &- 16 : -1, fast: fast,
            depth: depth)
    }

    /// The next attribute of the walk, or nil at the end of the SET.
    @inline(__always)
    func nextAttribute(_ c: inout AttributeCursor) throws(ReceiptError) -> AttributeSlot? {
        let p = c.p
        guard p < c.end else { return nil }
        let a: (slot: AttributeSlot, end: Int)
        if p <= c.wordsEnd, let f = attributeShort(at: p, limit: c.end) {
            a = f
        } else if c.fast, let f = attributeFast(at: p, limit: c.end) {
            a = f
        } else {
            a = try attributeSlow(at: p, limit: c.end, depth: c.depth)
        }
        c.p = a.end
        return a.slot
    }

    /// The common DER attribute: `30 len 02 01|02 type 02 01|02 version 04 len value`, lengths in short form or
    /// 0x81/0x82, non-negative type, value filling the SEQUENCE. Nil for anything else (the slow path decides).
    @inline(__always)
    func attributeFast(at p: Int, limit: Int) -> (slot: AttributeSlot, end: Int)? {
        // `limit <= bytes.count`: it is the end of a SET that was bounds-checked when it was read. The smallest
        // attribute is 10 octets (30 08 02 01 t 02 01 v 04 00), so the header reads below are in range.
        guard p + 10 <= limit, byte(p) == BERTag.sequence else { return nil }
        guard let (q, length) = shortLength(at: p + 1, below: limit) else { return nil }
        let end = q &+ length  // q <= p + 4 and length < 2^16: no overflow
        // Eight content octets at least, so the two INTEGER headers and contents (q ..< q + 8) are in range.
        guard end <= limit, q &+ 8 <= end else { return nil }
        let type: Int
        let version: Int
        let s: Int  // where the value OCTET STRING starts
        // The two shapes receipts use, each matched as one word: `02 01 t 02 01 v 04 ..` (app-level types) and
        // `02 02 t t 02 01 v 04` (in-app types 1701...). The type's first octet must be below 0x80 (negative
        // types go to the slow path, which rejects them).
        let base = bytes.baseAddress.unsafelyUnwrapped  // in range: q + 8 <= end <= limit <= bytes.count
        let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: q, as: UInt64.self))
        if w & 0x00FF_00FF_FF80_FFFF == 0x0004_0001_0200_0102 {
            type = Int(truncatingIfNeeded: (w >> 16) & 0xFF)
            version = Int(Int8(truncatingIfNeeded: w >> 40))
            s = q &+ 6
        } else if w & 0xFF00_FFFF_0080_FFFF == 0x0400_0102_0000_0202 {
            type = Int(truncatingIfNeeded: (w >> 16) & 0xFF) << 8 | Int(truncatingIfNeeded: (w >> 24) & 0xFF)
            version = Int(Int8(truncatingIfNeeded: w >> 48))
            s = q &+ 7
        } else {
            // Any other one- or two-octet type and version, octet by octet.
            guard byte(q) == BERTag.integer else { return nil }
            let typeCount = byte(q &+ 1)
            if typeCount == 1 {
                let b = byte(q &+ 2)
                guard b < 0x80 else { return nil }
                type = Int(b)
            } else if typeCount == 2 {
                let b = byte(q &+ 2)
                guard b < 0x80 else { return nil }
                type = Int(b) << 8 | Int(byte(q &+ 3))
            } else {
                return nil
            }
            let r = q &+ 2 &+ Int(typeCount)  // <= q + 4
            guard byte(r) == BERTag.integer else { return nil }
            let versionCount = byte(r &+ 1)
            if versionCount == 1 {
                version = Int(Int8(bitPattern: byte(r &+ 2)))
            } else if versionCount == 2 {
                version = Int(Int16(bitPattern: UInt16(byte(r &+ 2)) << 8 | UInt16(byte(r &+ 3))))
            } else {
                return nil
            }
            s = r &+ 2 &+ Int(versionCount)  // <= q + 8 <= end
        }
        guard s + 2 <= end, byte(s) == BERTag.octetString else { return nil }
        guard let (valueStart, valueLength) = shortLength(at: s + 1, below: end), valueStart + valueLength == end
        else { return nil }
        return (AttributeSlot(type: type, version: version, value: valueStart..<end, start: p), end)
    }

    /// The two attribute shapes receipts are made of, with every length in short form, read as two words:
    /// `30 L 02 02 t t 02 01 | v 04 VL` (in-app types 1701...) and `30 L 02 01 t 02 01 v | 04 VL` (app-level
    /// types), the value filling the SEQUENCE (`L == VL + 9`, resp. `VL + 8`). Nil for anything else;
    /// `attributeFast` accepts the same inputs with the same slot. The caller has checked `p + 16 <= bytes.count`
    /// (the words may run past `limit`, but only octets below `end <= limit` decide). The value ranges are built
    /// unchecked: their lower bound is at most `end` by the length equation.
    @inline(__always)
    func attributeShort(at p: Int, limit: Int) -> (slot: AttributeSlot, end: Int)? {
        let base = bytes.baseAddress.unsafelyUnwrapped  // in range: p + 16 <= bytes.count
        let w0 = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
        let w1 = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p &+ 8, as: UInt64.self))
        let length = Int(truncatingIfNeeded: (w0 >> 8) & 0xFF)  // below 0x80: the masks check its top bit
        let end = p &+ 2 &+ length
        guard end <= limit else { return nil }
        // Octet 4 (the type's first octet) must be below 0x80: negative types go to the slow path.
        if w0 & 0xFFFF_0080_FFFF_80FF == 0x0102_0000_0202_0030 {
            guard w1 & 0x80_FF00 == 0x400, length == Int(truncatingIfNeeded: (w1 >> 16) & 0xFF) &+ 9 else {
                return nil
            }
            let type = Int(truncatingIfNeeded: (w0 >> 32) & 0xFF) << 8 | Int(truncatingIfNeeded: (w0 >> 40) & 0xFF)
            let version = Int(Int8(truncatingIfNeeded: w1))
            let value = Range(uncheckedBounds: (p &+ 11, end))  // end == p + 11 + VL
            return (AttributeSlot(type: type, version: version, value: value, start: p), end)
        }
        if w0 & 0x00FF_FF80_FFFF_80FF == 0x0001_0200_0102_0030 {
            guard w1 & 0x80FF == 0x04, length == Int(truncatingIfNeeded: (w1 >> 8) & 0xFF) &+ 8 else { return nil }
            let type = Int(truncatingIfNeeded: (w0 >> 32) & 0xFF)
            let version = Int(Int8(truncatingIfNeeded: w0 >> 56))
            let value = Range(uncheckedBounds: (p &+ 10, end))  // end == p + 10 + VL
            return (AttributeSlot(type: type, version: version, value: value, start: p), end)
        }
        return nil
    }

    /// Any attribute, element by element, with the precise error for a malformed one.
    @inline(never)
    func attributeSlow(at p: Int, limit: Int, depth: Int) throws(ReceiptError) -> (slot: AttributeSlot, end: Int) {
        let attr = try element(at: p, limit: limit, depth: depth + 1)
        guard attr.identifier == BERTag.sequence else {
            throw ReceiptError(.malformedDER, at: attr.start, "a receipt attribute is not a SEQUENCE")
        }
        let type = try firstChild(of: attr, depth: depth + 1)
        guard type.identifier == BERTag.integer, let t = int64(type), t >= 0, t <= Int64(Int32.max),
            let version = try next(after: type, in: attr, depth: depth + 1),
            version.identifier == BERTag.integer, let v = int64(version),
            let value = try next(after: version, in: attr, depth: depth + 1),
            value.identifier == BERTag.octetString
        else { throw ReceiptError(.malformedDER, at: attr.start, "a receipt attribute is malformed") }
        let slot = AttributeSlot(
            type: Int(t), version: Int(truncatingIfNeeded: v), value: value.content, start: attr.start)
        return (slot, attr.end)
    }

    /// The single element inside an attribute value, which must fill it exactly.
    @inline(__always)
    func inner(_ slot: AttributeSlot, depth: Int) throws(ReceiptError) -> BERElement {
        // Fast path: a one-octet tag and a short or 0x81/0x82 length that ends exactly at the value's end.
        // The value range lies inside `bytes` (checked when the attribute was read); each read is below `e`.
        let s = slot.value.lowerBound
        let e = slot.value.upperBound
        // Wrapping arithmetic: both bounds are offsets into the buffer, far from overflow.
        if fastPaths && e &- s >= 2 {
            let id = byte(s)
            if id & 0x1F != 0x1F, let (contentStart, length) = shortLength(at: s &+ 1, below: e),
                contentStart &+ length == e
            {
                return BERElement(
                    tagClass: id >> 6, constructed: id & 0x20 != 0, tagNumber: UInt32(id & 0x1F), identifier: id,
                    start: s, contentStart: contentStart, contentEnd: e, end: e, indefinite: false)
            }
        }
        return try innerSlow(slot, depth: depth)
    }

    @inline(never)
    func innerSlow(_ slot: AttributeSlot, depth: Int) throws(ReceiptError) -> BERElement {
        let e = try element(at: slot.value.lowerBound, limit: slot.value.upperBound, depth: depth)
        guard e.end == slot.value.upperBound else {
            throw ReceiptError(.malformedAttribute, at: slot.start, "an attribute value has trailing bytes")
        }
        return e
    }

    /// A string attribute: UTF8String, IA5String or PrintableString holding valid UTF-8 without NUL.
    @inline(__always)
    func stringValue(_ slot: AttributeSlot, depth: Int) throws(ReceiptError) -> Range<Int>? {
        if slot.value.isEmpty { return nil }
        let e = try inner(slot, depth: depth)
        switch e.identifier {
        case BERTag.utf8String, BERTag.ia5String, BERTag.printableString: break
        default: throw ReceiptError(.malformedAttribute, at: slot.start, "a string attribute has another type")
        }
        guard isValidText(e.content) else { throw invalidText(e.content, at: slot.start) }
        return e.content
    }

    /// Why a string attribute that `isValidText` refused is not text: a NUL character (U+0000, which UTF-8
    /// allows but no receipt field holds), or bytes that are not UTF-8.
    @inline(never)
    func invalidText(_ r: Range<Int>, at start: Int) -> ReceiptError {
        if bytes[r].contains(0) {
            return ReceiptError(.malformedAttribute, at: start, "a string attribute holds a NUL character (U+0000)")
        }
        return ReceiptError(.malformedAttribute, at: start, "a string attribute is not valid UTF-8 text")
    }

    /// `UTF8Check.isValidText` of `r`, with strings of up to 32 octets (nearly all in receipts) checked inline as
    /// one to four words when they are ASCII without NUL. The words lie in `r` except for a string shorter than 8
    /// octets, whose word ends at `r.upperBound` and starts before it, inside the buffer: `upperBound >= 8` always
    /// holds, as at least ten octets of attribute header precede any value. Octets before the string are replaced
    /// by 0x01, which passes.
    @inline(__always)
    func isValidText(_ r: Range<Int>) -> Bool {
        let n = r.count
        if n == 0 { return true }
        let e = r.upperBound
        if fastPaths && n <= 32 && e >= 8 {
            let base = bytes.baseAddress.unsafelyUnwrapped
            @inline(__always) func word(_ at: Int) -> UInt64 {
                UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self))
            }
            var last = word(e &- 8)
            if n < 8 {
                let keep = ~UInt64(0) &<< (8 &* (8 &- n))  // the top n octets (little-endian: the last n), n in 1...7
                last = (last & keep) | (0x0101_0101_0101_0101 & ~keep)
            }
            // The last word and those at lowerBound, lowerBound + 8 and upperBound - 16 (the ones that apply) cover
            // all n octets; their flags are or-ed, so one test decides.
            var flags = UTF8Check.nonASCIIOrNUL(last)
            if n > 8 { flags |= UTF8Check.nonASCIIOrNUL(word(r.lowerBound)) }
            if n > 16 {
                flags |= UTF8Check.nonASCIIOrNUL(word(r.lowerBound &+ 8)) | UTF8Check.nonASCIIOrNUL(word(e &- 16))
            }
            if flags == 0 { return true }
        }
        return UTF8Check.isValidText(UnsafeRawBufferPointer(rebasing: bytes[r]))
    }

    @inline(__always)
    func integerValue(_ slot: AttributeSlot, depth: Int) throws(ReceiptError) -> Int64? {
        let s = slot.value.lowerBound
        let e = slot.value.upperBound
        if s == e { return nil }
        // Fast path: `02 n` and 1...8 contents octets filling the value, read as one big-endian word ending at
        // `e` (inside the buffer) and sign-extended from its last n octets. `e >= 8` keeps the word's first octet
        // in the buffer too; it always holds, as at least ten octets of attribute header precede any value.
        if fastPaths && e &- s >= 3 && e >= 8 && byte(s) == BERTag.integer {
            let n = Int(byte(s &+ 1))
            if n >= 1 && n <= 8 && s &+ 2 &+ n == e {
                let word = bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: e &- 8, as: UInt64.self)
                let unused = UInt64(truncatingIfNeeded: 64 &- 8 &* n)  // 0...56
                return Int64(bitPattern: UInt64(bigEndian: word) &<< unused) &>> unused
            }
        }
        return try integerValueSlow(slot, depth: depth)
    }

    @inline(never)
    func integerValueSlow(_ slot: AttributeSlot, depth: Int) throws(ReceiptError) -> Int64? {
        let e = try inner(slot, depth: depth)
        guard e.identifier == BERTag.integer, let v = int64(e) else {
            throw ReceiptError(.malformedAttribute, at: slot.start, "an integer attribute does not fit 64 bits")
        }
        return v
    }

    @inline(__always)
    func dateValue(_ slot: AttributeSlot, depth: Int) throws(ReceiptError) -> Int64? {
        if slot.value.isEmpty { return nil }
        let e = try inner(slot, depth: depth)
        guard e.identifier == BERTag.ia5String || e.identifier == BERTag.utf8String else {
            throw ReceiptError(.malformedAttribute, at: slot.start, "a date attribute is not a string")
        }
        // The empty string (no such date, a quarter of the dates) without the call: DateParser says `.absent`.
        if e.contentStart == e.contentEnd { return nil }
        // Apple's own form first (20 octets inside the buffer, as the content range was checked); `parse` decides
        // everything else, and tests and the fuzzer compare both with the fast paths off.
        if fastPaths && e.contentEnd &- e.contentStart == 20 {
            let ms = DateParser.zulu(bytes.baseAddress.unsafelyUnwrapped + e.contentStart)
            if ms != DateParser.notZulu { return ms }
        }
        switch DateParser.parse(UnsafeRawBufferPointer(rebasing: bytes[e.content])) {
        case .absent: return nil
        case .millis(let ms): return ms
        case .invalid: throw ReceiptError(.malformedAttribute, at: slot.start, "a date attribute is not a valid date")
        }
    }
}
