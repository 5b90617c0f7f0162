import ReceiptModel

// A small DER/BER writer: enough ASN.1 to build certificates, PKCS #7 SignedData and receipt payloads.

/// Encodes ASN.1 values as DER TLVs (tag, definite length, contents), returned as byte arrays.
///
/// Every function returns a complete TLV, so values compose by concatenation:
/// `DER.sequence([DER.integer(1), DER.utf8String("x")])`. Use ``ASN1Node`` when the same structure must also be
/// written as BER with indefinite lengths.
public enum DER {
    // MARK: - Tags

    public static let tagInteger: UInt8 = 0x02
    public static let tagBitString: UInt8 = 0x03
    public static let tagOctetString: UInt8 = 0x04
    public static let tagNull: UInt8 = 0x05
    public static let tagOID: UInt8 = 0x06
    public static let tagUTF8String: UInt8 = 0x0C
    public static let tagPrintableString: UInt8 = 0x13
    public static let tagIA5String: UInt8 = 0x16
    public static let tagUTCTime: UInt8 = 0x17
    public static let tagGeneralizedTime: UInt8 = 0x18
    public static let tagSequence: UInt8 = 0x30
    public static let tagSet: UInt8 = 0x31

    // MARK: - Framing

    /// The DER length octets for `n` (short form below 128, otherwise long form with minimal octets).
    public static func length(_ n: Int) -> [UInt8] {
        var out: [UInt8] = []
        appendLength(n, to: &out)
        return out
    }

    /// Appends the DER length octets for `n` to `out`.
    public static func appendLength(_ n: Int, to out: inout [UInt8]) {
        precondition(n >= 0, "negative length")
        if n < 0x80 {
            out.append(UInt8(n))
            return
        }
        var octets = 0
        var v = n
        while v > 0 {
            octets += 1
            v >>= 8
        }
        out.append(0x80 | UInt8(octets))
        for i in stride(from: octets - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: n >> (8 * i))) }
    }

    /// One TLV with a definite length.
    public static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(content.count + 6)
        out.append(tag)
        appendLength(content.count, to: &out)
        out.append(contentsOf: content)
        return out
    }

    /// One TLV whose contents are the concatenation of `parts` (no intermediate copy of the contents).
    public static func tlv(_ tag: UInt8, parts: [[UInt8]]) -> [UInt8] {
        var total = 0
        for p in parts { total += p.count }
        var out: [UInt8] = []
        out.reserveCapacity(total + 6)
        out.append(tag)
        appendLength(total, to: &out)
        for p in parts { out.append(contentsOf: p) }
        return out
    }

    /// `SEQUENCE { parts... }`; each part is already a TLV.
    public static func sequence(_ parts: [[UInt8]]) -> [UInt8] { tlv(tagSequence, parts: parts) }

    /// `SET { parts... }` in the given order. DER requires SET OF elements sorted by their encodings; pass
    /// `sorted: true` for that. Receipt payloads are written unsorted, as Apple writes them.
    public static func set(_ parts: [[UInt8]], sorted: Bool = false) -> [UInt8] {
        let ordered = sorted ? parts.sorted { $0.lexicographicallyPrecedes($1) } : parts
        return tlv(tagSet, parts: ordered)
    }

    /// A context-specific constructed tag `[n]` (0xA0 | n) around `content` (EXPLICIT when `content` is one TLV).
    public static func context(_ n: UInt8, _ content: [UInt8]) -> [UInt8] { tlv(0xA0 | n, content) }

    // MARK: - Primitive values

    /// An INTEGER in minimal two's-complement form.
    public static func integer(_ v: Int64) -> [UInt8] { tlv(tagInteger, integerContents(v)) }

    /// The contents octets of an INTEGER holding `v` (minimal two's complement).
    public static func integerContents(_ v: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        var x = v
        repeat {
            bytes.insert(UInt8(truncatingIfNeeded: x), at: 0)
            x >>= 8  // arithmetic shift keeps the sign, so the loop ends at 0 or -1
        } while !(x == 0 && bytes[0] & 0x80 == 0) && !(x == -1 && bytes[0] & 0x80 != 0)
        return bytes
    }

    /// A non-negative INTEGER from big-endian magnitude bytes (leading zeros trimmed, a 0x00 added when the top
    /// bit is set). Used for RSA moduli and certificate serials.
    public static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var m = Array(magnitude.drop { $0 == 0 })
        if m.isEmpty { m = [0] }
        if m[0] & 0x80 != 0 { m.insert(0, at: 0) }
        return tlv(tagInteger, m)
    }

    public static func octetString(_ bytes: [UInt8]) -> [UInt8] { tlv(tagOctetString, bytes) }
    public static func utf8String(_ s: String) -> [UInt8] { tlv(tagUTF8String, Array(s.utf8)) }
    public static func ia5String(_ s: String) -> [UInt8] { tlv(tagIA5String, Array(s.utf8)) }
    public static func printableString(_ s: String) -> [UInt8] { tlv(tagPrintableString, Array(s.utf8)) }
    public static let null: [UInt8] = [0x05, 0x00]
    public static func boolean(_ b: Bool) -> [UInt8] { [0x01, 0x01, b ? 0xFF : 0x00] }

    /// A BIT STRING with no unused bits.
    public static func bitString(_ bytes: [UInt8]) -> [UInt8] { tlv(tagBitString, [0] + bytes) }

    /// An OBJECT IDENTIFIER from dotted text ("1.2.840.113549.1.7.2"). Traps on malformed text: OIDs here are
    /// constants of the program, not input.
    public static func oid(_ dotted: String) -> [UInt8] { tlv(tagOID, oidContents(dotted)) }

    /// The contents octets of an OBJECT IDENTIFIER.
    public static func oidContents(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        precondition(arcs.count >= 2, "an OID has at least two arcs")
        var out: [UInt8] = []
        for arc in [arcs[0] * 40 + arcs[1]] + arcs.dropFirst(2) {
            var chunk: [UInt8] = [UInt8(arc & 0x7F)]
            var v = arc >> 7
            while v > 0 {
                chunk.insert(UInt8(v & 0x7F) | 0x80, at: 0)
                v >>= 7
            }
            out += chunk
        }
        return out
    }

    /// UTCTime (years 1950-2049) or GeneralizedTime (other years) for epoch seconds, as X.509 requires.
    public static func time(epochSeconds: Int64) -> [UInt8] {
        let ms = epochSeconds * 1000
        let year = Int(CivilTime.fields(epochMillis: ms).year)
        if year >= 1950 && year < 2050 {
            return tlv(tagUTCTime, Array(TimeText.digits(ms, yearDigits: 2, separators: false).utf8) + [0x5A])
        }
        return tlv(tagGeneralizedTime, Array(TimeText.digits(ms, yearDigits: 4, separators: false).utf8) + [0x5A])
    }

    /// `AlgorithmIdentifier { oid, NULL }`.
    public static func algorithm(_ dotted: String, nullParameters: Bool = true) -> [UInt8] {
        sequence(nullParameters ? [oid(dotted), null] : [oid(dotted)])
    }
}
