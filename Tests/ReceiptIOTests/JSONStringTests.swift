import ReceiptIO
import Testing

private func unescape(_ s: String) -> [UInt8] {
    let raw = Array(s.utf8)
    var out = [UInt8](repeating: 0, count: raw.count)
    let n = raw.withUnsafeBytes { r in out.withUnsafeMutableBytes { JSONString.unescape(r, into: $0) } }
    return Array(out[0..<n])
}

@Suite struct JSONStringTests {
    @Test func decodesSimpleEscapes() {
        #expect(unescape(#"a\/b\\c\"d\n\r\t\b\f"#) == Array("a/b\\c\"d\n\r\t\u{8}\u{C}".utf8))
    }

    @Test func decodesUnicodeEscapesToUTF8IncludingSurrogatePairs() {
        #expect(unescape(#"\u0041\u00e9\u20AC\ud83d\ude00"#) == Array("Aé€😀".utf8))
    }

    @Test func replacesLoneSurrogatesWithTheReplacementCharacter() {
        #expect(unescape(#"\ud83dx\ude00"#) == Array("\u{FFFD}x\u{FFFD}".utf8))
    }

    @Test func comparesEscapedAndPlainKeys() {
        let target = Array("receipt-data".utf8)
        for (raw, escaped, equal) in [
            ("receipt-data", false, true), (#"receipt\u002ddata"#, true, true), ("receipt-dat", false, false),
            (#"receipt\u002Ddatb"#, true, false),
        ] {
            let bytes = Array(raw.utf8)
            #expect(bytes.withUnsafeBytes { JSONString.equals($0, escaped: escaped, target) } == equal, "\(raw)")
        }
    }
}
