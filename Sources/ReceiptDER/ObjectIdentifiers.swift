/// Contents octets of the object identifiers the container walk compares against.
public enum OID {
    /// 1.2.840.113549.1.7.2 signedData
    public static let signedData: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    /// 1.2.840.113549.1.7.1 data
    public static let data: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    /// 1.3.14.3.2.26 SHA-1
    public static let sha1: [UInt8] = [0x2B, 0x0E, 0x03, 0x02, 0x1A]
    /// 2.16.840.1.101.3.4.2.1 SHA-256
    public static let sha256: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
    /// 1.2.840.113549.1.1.1 rsaEncryption
    public static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    /// 1.2.840.113549.1.1.5 sha1WithRSAEncryption
    public static let sha1WithRSA: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x05]
    /// 1.2.840.113549.1.1.11 sha256WithRSAEncryption
    public static let sha256WithRSA: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B]
    /// 1.2.840.113549.1.9.4 messageDigest (a signed attribute)
    public static let messageDigest: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x04]
}

/// An object identifier's contents (4 to 16 octets) as two little-endian words, to compare an element with
/// (`BERReader.contentEquals`) without reaching for an array: `first` holds the first 8 octets and `last` the last
/// 8 (4 and 4 below 8 octets; the two overlap when the contents are shorter than 16, resp. 8).
public struct OIDWords: Sendable, Equatable {
    public let count: Int
    public let first: UInt64
    public let last: UInt64

    public init(count: Int, first: UInt64, last: UInt64) {
        self.count = count
        self.first = first
        self.last = last
    }

    /// The words of `oid` (4 to 16 octets).
    public init(_ oid: [UInt8]) {
        precondition(oid.count >= 4 && oid.count <= 16, "OIDWords holds 4 to 16 octets")
        let w = oid.count >= 8 ? 8 : 4
        func word(_ octets: ArraySlice<UInt8>) -> UInt64 {
            octets.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        self.init(count: oid.count, first: word(oid.prefix(w)), last: word(oid.suffix(w)))
    }
}

extension OID {
    /// The identifiers above as `OIDWords` constants (BERReaderTests checks each against its array): the
    /// container walk compares six or more per receipt, and an array constant costs a lazy-initialization check
    /// and a call per use.
    public enum Words {
        public static var signedData: OIDWords {
            OIDWords(count: 9, first: 0x0701_0DF7_8648_862A, last: 0x0207_010D_F786_4886)
        }
        public static var data: OIDWords {
            OIDWords(count: 9, first: 0x0701_0DF7_8648_862A, last: 0x0107_010D_F786_4886)
        }
        public static var sha1: OIDWords { OIDWords(count: 5, first: 0x0203_0E2B, last: 0x1A02_030E) }
        public static var sha256: OIDWords {
            OIDWords(count: 9, first: 0x0204_0365_0148_8660, last: 0x0102_0403_6501_4886)
        }
        public static var rsaEncryption: OIDWords {
            OIDWords(count: 9, first: 0x0101_0DF7_8648_862A, last: 0x0101_010D_F786_4886)
        }
        public static var sha1WithRSA: OIDWords {
            OIDWords(count: 9, first: 0x0101_0DF7_8648_862A, last: 0x0501_010D_F786_4886)
        }
        public static var sha256WithRSA: OIDWords {
            OIDWords(count: 9, first: 0x0101_0DF7_8648_862A, last: 0x0B01_010D_F786_4886)
        }
        public static var messageDigest: OIDWords {
            OIDWords(count: 9, first: 0x0901_0DF7_8648_862A, last: 0x0409_010D_F786_4886)
        }
    }
}
