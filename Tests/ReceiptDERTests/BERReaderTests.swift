import ReceiptDER
import Testing

@Suite struct BERReaderTests {
    /// `06 n <contents>` in an exactly sized buffer, compared with `oid`.
    static func equals(_ contents: [UInt8], _ oid: [UInt8]) -> Bool {
        let tlv = [0x06, UInt8(contents.count)] + contents
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: tlv.count, alignment: 1)
        defer { buf.deallocate() }
        buf.copyBytes(from: tlv)
        let r = BERReader(UnsafeRawBufferPointer(buf))
        guard let e = try? r.element(at: 0, limit: tlv.count) else { return false }
        return r.contentEquals(e, oid)
    }

    @Test func contentEqualsComparesEveryOctetOfEveryLength() {
        for n in 0...24 {
            let oid = (0..<n).map { UInt8(truncatingIfNeeded: 0x2A &+ $0 &* 37) }
            #expect(Self.equals(oid, oid))
            #expect(!Self.equals(oid + [0x01], oid))
            if n > 0 { #expect(!Self.equals(Array(oid.dropLast()), oid)) }
            for i in 0..<n {
                var other = oid
                other[i] ^= 0x80
                #expect(!Self.equals(other, oid), "length \(n), octet \(i)")
            }
        }
        #expect(Self.equals(OID.sha256, OID.sha256))
        #expect(!Self.equals(OID.sha1WithRSA, OID.sha256WithRSA))
    }

    /// `06 n <contents>` in an exactly sized buffer, compared with `oid` as words.
    static func equals(_ contents: [UInt8], _ oid: OIDWords) -> Bool {
        let tlv = [0x06, UInt8(contents.count)] + contents
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: tlv.count, alignment: 1)
        defer { buf.deallocate() }
        buf.copyBytes(from: tlv)
        let r = BERReader(UnsafeRawBufferPointer(buf))
        guard let e = try? r.element(at: 0, limit: tlv.count) else { return false }
        return r.contentEquals(e, oid)
    }

    /// The word constants hold the octets of the arrays they stand for.
    @Test func oidWordConstantsMatchTheirArrays() {
        let pairs: [(OIDWords, [UInt8])] = [
            (OID.Words.signedData, OID.signedData), (OID.Words.data, OID.data), (OID.Words.sha1, OID.sha1),
            (OID.Words.sha256, OID.sha256), (OID.Words.rsaEncryption, OID.rsaEncryption),
            (OID.Words.sha1WithRSA, OID.sha1WithRSA), (OID.Words.sha256WithRSA, OID.sha256WithRSA),
            (OID.Words.messageDigest, OID.messageDigest),
        ]
        for (words, octets) in pairs {
            #expect(words == OIDWords(octets))
            #expect(Self.equals(octets, words))
        }
    }

    @Test func contentEqualsWordsComparesEveryOctetOfEveryLength() {
        for n in 4...16 {
            let oid = (0..<n).map { UInt8(truncatingIfNeeded: 0x2A &+ $0 &* 37) }
            let words = OIDWords(oid)
            #expect(Self.equals(oid, words))
            #expect(!Self.equals(oid + [0x01], words))
            #expect(!Self.equals(Array(oid.dropLast()), words))
            for i in 0..<n {
                var other = oid
                other[i] ^= 0x80
                #expect(!Self.equals(other, words), "length \(n), octet \(i)")
            }
        }
    }
}
