import ReceiptDER
import ReceiptModel
import Testing

/// `DateParser.zulu` (the 20-octet fast path) against the octet-by-octet reference parser: equal wherever the fast
/// path answers, and answering for every valid date of its form in 1901...2099.
@Suite struct ZuluDateTests {
    /// The fast path's answer (nil for `notZulu`) and the reference's, from an exactly sized heap copy (an ASan run
    /// would catch a read past the 20 octets).
    static func both(_ bytes: [UInt8]) -> (Int64?, ParsedDate) {
        precondition(bytes.count == 20)
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 20, alignment: 1)
        defer { buf.deallocate() }
        buf.copyBytes(from: bytes)
        let fast = DateParser.zulu(UnsafeRawPointer(buf.baseAddress!))
        return (fast == DateParser.notZulu ? nil : fast, ScalarDateParser.reference(UnsafeRawBufferPointer(buf)))
    }

    static func text(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int, sep: String = "T") -> [UInt8] {
        func pad(_ v: Int, _ n: Int) -> String {
            var t = String(v)
            while t.count < n { t = "0" + t }
            return t
        }
        return Array("\(pad(y, 4))-\(pad(mo, 2))-\(pad(d, 2))\(sep)\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2))Z".utf8)
    }

    /// Whether a date the reference accepts is in the fast path's form: `T` as the separator and a year in
    /// 1901...2099 (read here octet by octet).
    static func inForm(_ b: [UInt8]) -> Bool {
        guard b[10] == UInt8(ascii: "T"), b[0..<4].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
        let year = b[0..<4].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return year >= 1901 && year <= 2099
    }

    /// Checks one string; returns whether the fast path answered.
    @discardableResult
    static func check(_ b: [UInt8]) -> Bool {
        let (fast, reference) = both(b)
        let label = String(decoding: b, as: UTF8.self)
        if let fast {
            #expect(reference == .millis(fast), "\(label): fast \(fast), reference \(reference)")
        } else if inForm(b), case .millis = reference {
            Issue.record("\(label): valid, but the fast path left it to the general parser")
        }
        return fast != nil
    }

    @Test func boundaryValuesOfEveryField() {
        let years =
            [0, 1, 1899, 1900, 1901, 1902, 1903, 1904, 1968, 1969, 1970, 1971, 1972, 1999, 2000, 2001, 2024]
            + [2096, 2098, 2099, 2100, 2101, 4001, 9999]
        var answered = 0
        for y in years {
            for mo in 0...13 {
                for d in [0, 1, 27, 28, 29, 30, 31, 32] {
                    for h in [0, 23, 24] {
                        for mi in [0, 59, 60] {
                            for s in [0, 59, 60, 61] {
                                if Self.check(Self.text(y, mo, d, h, mi, s)) { answered += 1 }
                            }
                        }
                    }
                }
            }
        }
        #expect(answered > 10_000, "\(answered)")
    }

    @Test func everyDayOf1901To2099() {
        for y in 1901...2099 {
            for mo in 1...12 {
                for d in 1...31 {
                    #expect(
                        Self.check(Self.text(y, mo, d, (y + d) % 24, (mo * 7) % 60, d % 61))
                            == (d <= CivilTime.daysInMonth(year: y, month: mo)))
                }
            }
        }
    }

    @Test func everyOctetIsChecked() {
        for good in [
            Self.text(2024, 2, 29, 23, 59, 60), Self.text(1901, 1, 1, 0, 0, 0), Self.text(2099, 12, 31, 9, 9, 9),
        ] {
            #expect(Self.check(good))
            for k in 0..<20 {
                for v in 0...255 {
                    var b = good
                    b[k] = UInt8(v)
                    Self.check(b)
                }
            }
        }
    }

    @Test func leavesOtherSeparatorsToTheGeneralParser() {
        // A space instead of `T` is a valid date for `parse`, but not Apple's form.
        let spaced = Self.text(2020, 9, 27, 12, 7, 19, sep: " ")
        #expect(Self.both(spaced).0 == nil)
        #expect(Self.both(spaced).1 != .invalid)
    }
}
