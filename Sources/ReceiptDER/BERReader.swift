import ReceiptModel

/// One BER/DER element located in a buffer: where its header, contents and end are. Never copies.
public struct BERElement: Sendable, Equatable {
    /// Tag class: 0 universal, 1 application, 2 context-specific, 3 private.
    public var tagClass: UInt8
    public var constructed: Bool
    public var tagNumber: UInt32
    /// The first identifier octet (enough to tell the tags a receipt uses apart).
    public var identifier: UInt8
    /// Offset of the identifier octet.
    public var start: Int
    /// Offset of the first contents octet.
    public var contentStart: Int
    /// Offset just past the contents (for indefinite lengths: the end-of-contents marker's offset).
    public var contentEnd: Int
    /// Offset just past the whole element (after the end-of-contents marker, for indefinite lengths).
    public var end: Int
    public var indefinite: Bool

    public var content: Range<Int> { contentStart..<contentEnd }
    public var tlv: Range<Int> { start..<end }
}

/// Universal and context tags (first identifier octet) that the receipt format uses.
public enum BERTag {
    public static let integer: UInt8 = 0x02
    public static let bitString: UInt8 = 0x03
    public static let octetString: UInt8 = 0x04
    public static let constructedOctetString: UInt8 = 0x24
    public static let null: UInt8 = 0x05
    public static let oid: UInt8 = 0x06
    public static let utf8String: UInt8 = 0x0C
    public static let printableString: UInt8 = 0x13
    public static let ia5String: UInt8 = 0x16
    public static let utcTime: UInt8 = 0x17
    public static let generalizedTime: UInt8 = 0x18
    public static let sequence: UInt8 = 0x30
    public static let set: UInt8 = 0x31
    public static let context0: UInt8 = 0xA0
    public static let context1: UInt8 = 0xA1
    public static let context3: UInt8 = 0xA3
    public static let implicit0Primitive: UInt8 = 0x80
}

/// A BER/DER reader over one buffer. It only reads: every element is bounds-checked once against its enclosing
/// element, and everything it returns is an offset into `bytes`.
public struct BERReader {
    public let bytes: UnsafeRawBufferPointer
    /// `DERLimits.maxDepth`, the only limit the reader applies (kept alone: readers are copied into every helper,
    /// and a smaller struct is cheaper to pass).
    public let maxDepth: Int
    /// Whether the payload walk may take its fast paths (AttributeReader.swift); tests turn them off to compare
    /// the fast and the element-by-element decoding of the same bytes.
    var fastPaths = true
    /// Ends of indefinite-length elements already walked in this buffer (the container parse sets it).
    var indefiniteEnds: IndefiniteEnds? = nil

    public init(_ bytes: UnsafeRawBufferPointer, limits: DERLimits = DERLimits()) {
        self.bytes = bytes
        self.maxDepth = limits.maxDepth
    }

    @inline(__always) func byte(_ i: Int) -> UInt8 {
        // Callers check `i < limit <= bytes.count` before every read, so the buffer is not empty and its base
        // address is not nil (no unwrap check needed).
        bytes.baseAddress.unsafelyUnwrapped.load(fromByteOffset: i, as: UInt8.self)
    }

    /// The fast paths' length: a definite length in at most three octets (short form, 0x81 or 0x82) starting at
    /// `i`, whose octets all lie below `bound`: where the content starts and how long it is. Nil for any other
    /// form, which the slow paths read (and reject with the precise error). The caller has checked
    /// `i < bound <= bytes.count`.
    @inline(__always) func shortLength(at i: Int, below bound: Int) -> (contentStart: Int, length: Int)? {
        // Wrapping arithmetic: `i < bound <= bytes.count`, so none of these sums can overflow.
        let l0 = byte(i)
        if l0 < 0x80 { return (i &+ 1, Int(l0)) }
        if l0 == 0x81, i &+ 2 <= bound { return (i &+ 2, Int(byte(i &+ 1))) }
        if l0 == 0x82, i &+ 3 <= bound { return (i &+ 3, Int(byte(i &+ 1)) << 8 | Int(byte(i &+ 2))) }
        return nil
    }

    /// Reads the element starting at `pos`, which must end at or before `limit`.
    /// `depth` counts enclosing constructed elements, for the nesting limit.
    @inline(__always)
    public func element(at pos: Int, limit: Int, depth: Int = 0) throws(ReceiptError) -> BERElement {
        // Fast path for what DER receipts are made of: a one-octet tag and a definite length of up to 2 octets.
        if pos >= 0, pos + 4 <= limit, limit <= bytes.count {
            let id = byte(pos)
            if id & 0x1F != 0x1F {
                // pos + 4 <= limit: every octet of a length of up to three octets is in range.
                guard let (contentStart, length) = shortLength(at: pos + 1, below: limit) else {
                    return try elementSlow(at: pos, limit: limit, depth: depth)
                }
                let end = contentStart + length  // both below 2^31: no overflow
                guard end <= limit else {
                    throw ReceiptError(.malformedDER, at: pos, "an element is longer than its enclosing element")
                }
                return BERElement(
                    tagClass: id >> 6, constructed: id & 0x20 != 0, tagNumber: UInt32(id & 0x1F), identifier: id,
                    start: pos, contentStart: contentStart, contentEnd: end, end: end, indefinite: false)
            }
        }
        return try elementSlow(at: pos, limit: limit, depth: depth)
    }

    /// The general case: multi-octet tags, long lengths, indefinite lengths, elements near the end of the buffer.
    @inline(never)
    func elementSlow(at pos: Int, limit: Int, depth: Int) throws(ReceiptError) -> BERElement {
        guard limit <= bytes.count, pos >= 0, pos < limit else {
            throw ReceiptError(.malformedDER, at: pos, "an element runs past the end of its enclosing element")
        }
        var p = pos
        let id = byte(p)
        p += 1
        var number = UInt32(id & 0x1F)
        if number == 0x1F {
            // High tag number form: base-128, at most 4 octets (tag numbers below 2^28).
            number = 0
            var n = 0
            while true {
                guard p < limit else { throw ReceiptError(.malformedDER, at: p, "a tag runs past the end of the data") }
                let b = byte(p)
                p += 1
                n += 1
                guard n <= 4 else { throw ReceiptError(.malformedDER, at: pos, "a tag number is too large") }
                number = (number << 7) | UInt32(b & 0x7F)  // < 2^28 by the 4-octet limit
                if b & 0x80 == 0 { break }
            }
        }
        guard p < limit else { throw ReceiptError(.malformedDER, at: p, "a length runs past the end of the data") }
        let first = byte(p)
        p += 1
        let constructed = id & 0x20 != 0
        var result = BERElement(
            tagClass: id >> 6, constructed: constructed, tagNumber: number, identifier: id, start: pos,
            contentStart: 0, contentEnd: 0, end: 0, indefinite: false)
        if first < 0x80 {
            result.contentStart = p
            result.contentEnd = p + Int(first)  // first < 128: cannot overflow
        } else if first == 0x80 {
            guard constructed else {
                throw ReceiptError(.malformedDER, at: pos, "a primitive element has an indefinite length")
            }
            guard depth < maxDepth else {
                throw ReceiptError(.limitExceeded, at: pos, "elements are nested deeper than the limit")
            }
            result.indefinite = true
            result.contentStart = p
            if let memo = indefiniteEnds, let end = memo.end(of: pos, depth: depth, limit: limit) {
                result.contentEnd = end &- 2
                result.end = end
                return result
            }
            // Walk the children to find the end-of-contents marker (00 00).
            var q = p
            while true {
                guard q + 2 <= limit else {
                    throw ReceiptError(.malformedDER, at: pos, "an indefinite-length element has no end marker")
                }
                if byte(q) == 0 && byte(q + 1) == 0 { break }
                q = try element(at: q, limit: limit, depth: depth + 1).end
            }
            result.contentEnd = q
            result.end = q + 2
            indefiniteEnds?.remember(start: pos, end: q + 2, depth: depth)
            return result
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4 else { throw ReceiptError(.malformedDER, at: pos, "a length field is too long") }
            guard p + count <= limit else {
                throw ReceiptError(.malformedDER, at: p, "a length runs past the end of the data")
            }
            var length = 0
            for i in 0..<count { length = (length << 8) | Int(byte(p + i)) }  // at most 2^32 - 1 on 64-bit Int
            p += count
            result.contentStart = p
            result.contentEnd = p + length  // p < 2^31 and length < 2^32: cannot overflow a 64-bit Int
        }
        guard result.contentEnd <= limit else {
            throw ReceiptError(.malformedDER, at: pos, "an element is longer than its enclosing element")
        }
        result.end = result.contentEnd
        return result
    }

    /// Reads an element and checks its first identifier octet.
    public func expect(_ identifier: UInt8, at pos: Int, limit: Int, depth: Int = 0) throws(ReceiptError) -> BERElement
    {
        let e = try element(at: pos, limit: limit, depth: depth)
        guard e.identifier == identifier else {
            throw ReceiptError(.malformedDER, at: pos, "an element has an unexpected tag")
        }
        return e
    }

    /// The first child of a constructed element (throws when it has none).
    @inline(__always)
    public func firstChild(of e: BERElement, depth: Int) throws(ReceiptError) -> BERElement {
        guard e.constructed else { throw ReceiptError(.malformedDER, at: e.start, "expected a constructed element") }
        guard depth < maxDepth else {
            throw ReceiptError(.limitExceeded, at: e.start, "elements are nested deeper than the limit")
        }
        return try element(at: e.contentStart, limit: e.contentEnd, depth: depth + 1)
    }

    /// The element after `prev` inside `parent`, or nil at the end of the parent's contents.
    @inline(__always)
    public func next(after prev: BERElement, in parent: BERElement, depth: Int) throws(ReceiptError) -> BERElement? {
        guard prev.end < parent.contentEnd else { return nil }
        return try element(at: prev.end, limit: parent.contentEnd, depth: depth + 1)
    }

    /// Calls `body` for each child of a constructed element, in order.
    @inline(__always)
    public func forEachChild(
        of e: BERElement, depth: Int, _ body: (BERElement) throws(ReceiptError) -> Void
    ) throws(ReceiptError) {
        guard e.constructed else { throw ReceiptError(.malformedDER, at: e.start, "expected a constructed element") }
        guard depth < maxDepth else {
            throw ReceiptError(.limitExceeded, at: e.start, "elements are nested deeper than the limit")
        }
        var p = e.contentStart
        while p < e.contentEnd {
            let c = try element(at: p, limit: e.contentEnd, depth: depth + 1)
            try body(c)
            p = c.end
        }
    }

    /// True when the contents of `e` equal `oid` (the OID contents octets, without tag and length).
    public func contentEquals(_ e: BERElement, _ oid: [UInt8]) -> Bool {
        let n = e.contentEnd - e.contentStart
        guard n == oid.count else { return false }
        guard n > 0 else { return true }
        return oid.withUnsafeBytes { o in
            // Both sides hold n octets: the contents range was checked when `e` was read.
            let p = bytes.baseAddress.unsafelyUnwrapped + e.contentStart
            if n >= 8 {
                // Object identifiers are mostly 8 to 16 octets: the first and the last eight (they may overlap).
                return p.loadUnaligned(as: UInt64.self) == o.loadUnaligned(as: UInt64.self)
                    && p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
                        == o.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
                    && (n <= 16 || memoryEqual(p, o.baseAddress.unsafelyUnwrapped, n))
            }
            return memoryEqual(p, o.baseAddress.unsafelyUnwrapped, n)
        }
    }

    /// True when the contents of `e` equal `oid`'s octets.
    @inline(__always)
    public func contentEquals(_ e: BERElement, _ oid: OIDWords) -> Bool {
        let n = e.contentEnd &- e.contentStart
        guard n == oid.count else { return false }
        // The n >= 4 contents octets lie in the buffer (checked when `e` was read); every load below is inside them.
        let p = bytes.baseAddress.unsafelyUnwrapped + e.contentStart
        if n >= 8 {
            return UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) == oid.first
                && UInt64(littleEndian: p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)) == oid.last
        }
        return UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self))) == oid.first
            && UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self))) == oid.last
    }

    @inline(__always) func memoryEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
        for i in 0..<n where a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) {
            return false
        }
        return true
    }

    /// Decodes an INTEGER's contents as a signed 64-bit value; nil when it is empty or does not fit.
    @inline(__always)
    public func int64(_ e: BERElement) -> Int64? {
        var start = e.contentStart
        var count = e.contentEnd - e.contentStart
        // Attribute types and versions are one or two octets.
        if count == 1 { return Int64(Int8(bitPattern: byte(start))) }
        if count == 2 { return Int64(Int16(bitPattern: UInt16(byte(start)) << 8 | UInt16(byte(start + 1)))) }
        guard count >= 1 else { return nil }
        let negative = byte(start) & 0x80 != 0
        // Octets beyond 8 may only repeat the sign.
        while count > 8 {
            guard byte(start) == (negative ? 0xFF : 0x00) else { return nil }
            start += 1
            count -= 1
        }
        // Dropping sign octets must not change the sign of what is left.
        if count == 8 && (byte(start) & 0x80 != 0) != negative { return nil }
        var v: Int64 = negative ? -1 : 0
        for i in 0..<count { v = (v << 8) | Int64(byte(start + i)) }  // count <= 8 octets fit in 64 bits
        return v
    }
}
