import Foundation
import ReceiptModel
import Testing

/// `JSONText` against Foundation's parser: what it writes must read back as what it was given.
@Suite struct JSONTextTests {
    private static func text(_ build: (inout [UInt8]) -> Void) -> String {
        var out: [UInt8] = []
        build(&out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses one JSON value (a string, number, ...) the way a reader of our output would.
    private static func parse(_ bytes: [UInt8]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }

    @Test func escapesQuotesBackslashesAndControlCharacters() {
        #expect(Self.text { JSONText.appendString("a\"b\\c\nd\u{1}é", into: &$0) } == "\"a\\\"b\\\\c\\nd\\u0001é\"")
        #expect(Self.text { JSONText.appendString("\u{8}\u{C}\r\t\u{1F}", into: &$0) } == "\"\\b\\f\\r\\t\\u001f\"")
    }

    @Test func copiesSlashesAndLineSeparatorsAsTheyAre() {
        #expect(Self.text { JSONText.appendString("a/b\u{2028}\u{2029}", into: &$0) } == "\"a/b\u{2028}\u{2029}\"")
    }

    @Test func arraysOfStrings() {
        #expect(Self.text { JSONText.appendStringArray(["x", "y,z"], into: &$0) } == "[\"x\",\"y,z\"]")
    }

    @Test func everyControlCharacterAndEveryPlaneReadsBack() throws {
        var scalars = (0..<0x80).map { Unicode.Scalar(UInt8($0)) }
        scalars += [0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFEFF, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF]
            .map { Unicode.Scalar($0)! }
        for s in scalars {
            let string = "x" + String(Character(s)) + "y"
            var out: [UInt8] = []
            JSONText.appendString(string, into: &out)
            #expect(try Self.parse(out) as? String == string, "U+\(String(s.value, radix: 16))")
        }
    }

    @Test func randomStringsReadBack() throws {
        var rng = TestRNG(seed: 0x5171_4E65)
        let pool: [Unicode.Scalar] = ["\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "a", "é", "\u{2028}", "€", "😀", " "]
        for _ in 0..<2000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...24, using: &rng) {
                s.append(
                    Bool.random(using: &rng)
                        ? pool.randomElement(using: &rng)!
                        : Unicode.Scalar(UInt32.random(in: 0...0xD7FF, using: &rng))!)
            }
            let string = String(s)
            var out: [UInt8] = []
            JSONText.appendString(string, into: &out)
            #expect(try Self.parse(out) as? String == string)
        }
    }

    /// Invalid UTF-8 is repaired exactly as the standard library repairs it, so the text is always valid JSON.
    @Test func invalidUTF8BecomesReplacementCharactersAsStringDecodingDoes() throws {
        let cases: [[UInt8]] = [
            [0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98],
            [0x61, 0xE2, 0x82], [0xFF, 0xFE, 0x22], [0xC3], [0xE2, 0x28, 0xA1],
        ]
        var rng = TestRNG(seed: 0xBAD_0_8)
        var random: [[UInt8]] = []
        for _ in 0..<3000 {
            random.append(
                (0..<Int.random(in: 0...12, using: &rng)).map { _ in
                    // Mostly high bytes, where the interesting sequences are; some ASCII and escapes between.
                    let r = UInt8.random(in: 0...255, using: &rng)
                    return r < 48 ? [0x22, 0x5C, 0x0A, 0x41][Int(r) % 4] : r | 0x80
                })
        }
        for bytes in cases + random {
            var out: [UInt8] = []
            bytes.withUnsafeBytes { JSONText.appendString($0, into: &out) }
            #expect(String(validating: out, as: UTF8.self) != nil, "\(bytes)")
            #expect(try Self.parse(out) as? String == String(decoding: bytes, as: UTF8.self), "\(bytes)")
        }
    }

    @Test func integersAreExact() throws {
        var rng = TestRNG(seed: 0x1A7)
        let values: [Int64] = [0, 1, -1, 9, 10, -10, .max, .min, 9_007_199_254_740_993]
        for v in values + (0..<500).map({ _ in Int64.random(in: .min ... .max, using: &rng) }) {
            #expect(Self.text { JSONText.appendInteger(v, into: &$0) } == String(v))
        }
        #expect(Self.text { JSONText.appendInteger(UInt64.max, into: &$0) } == "18446744073709551615")
    }

    @Test func doublesReadBackAsTheSameDouble() throws {
        var rng = TestRNG(seed: 0xD0B1E)
        var values: [Double] = [
            0, -0.0, 1, -1, 0.5, 6, 0.924, 1e-5, 1e21, 1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        ]
        values += [9_007_199_254_740_992, 9_007_199_254_740_991, -123_456_789.125, 0.1 + 0.2]
        while values.count < 3000 {
            let d = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng))
            if d.isFinite { values.append(d) }
        }
        // JSONDecoder reads numbers exactly (JSONSerialization on Linux can be off by an ulp or two).
        var text: [UInt8] = []
        var w = JSONWriter(layout: .compact)
        w.beginArray(into: &text)
        for d in values {
            w.element(into: &text)
            JSONText.appendDouble(d, into: &text)
        }
        w.endArray(into: &text)
        let parsed = try JSONDecoder().decode([Double].self, from: Data(text))
        #expect(parsed.count == values.count)
        for (p, d) in zip(parsed, values) { #expect(p == d && p.sign == d.sign, "\(d) read back as \(p)") }
        #expect(Self.text { JSONText.appendDouble(6, into: &$0) } == "6")
        #expect(Self.text { JSONText.appendDouble(0.924, into: &$0) } == "0.924")
    }

    @Test func nonFiniteDoublesAreNull() {
        for d in [Double.infinity, -.infinity, .nan] {
            #expect(Self.text { JSONText.appendDouble(d, into: &$0) } == "null")
        }
    }

    @Test func literals() {
        #expect(Self.text { JSONText.appendBool(true, into: &$0) } == "true")
        #expect(Self.text { JSONText.appendBool(false, into: &$0) } == "false")
        #expect(Self.text { JSONText.appendNull(into: &$0) } == "null")
    }
}

/// SplitMix64: a seeded generator, so a failure repeats.
struct TestRNG: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
