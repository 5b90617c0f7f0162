import Foundation
import Testing

@testable import ReceiptJWS

/// The JWS payload reader: the same values as Foundation's JSON parser on what both accept, exact integers, strict
/// strings and numbers, bounded nesting, and a specific error (never a crash) on every malformed text.
@Suite struct PayloadJSONTests {
    /// A payload value as the Foundation types `JSONSerialization` uses, to compare the two readers.
    static func foundation(_ value: PayloadValue) -> Any {
        switch value {
        case .string(let s): return s
        case .integer(let v): return NSNumber(value: v)
        case .double(let d): return NSNumber(value: d)
        case .bool(let b): return NSNumber(value: b)
        case .null: return NSNull()
        case .array(let a): return a.map(foundation)
        case .object(let o): return foundation(o)
        }
    }

    static func foundation(_ object: [String: PayloadValue]) -> [String: Any] {
        object.mapValues(foundation)
    }

    static func parse(_ text: String) throws(PayloadJSONError) -> [String: PayloadValue] {
        try PayloadJSON.parseObject(Array(text.utf8))
    }

    static func errorCode(_ bytes: [UInt8]) -> PayloadJSONError.Code? {
        do throws(PayloadJSONError) {
            _ = try PayloadJSON.parseObject(bytes)
            return nil
        } catch {
            return error.code
        }
    }

    static let samples = [
        #"{"transactionId":"2000000123456789","quantity":1,"price":9990,"isUpgraded":false,"offerType":null}"#,
        #"{"a":[1,-2,3.5,1e3,-0.25E-2,true,false,null,"x"],"b":{"c":{"d":[[],{}]}},"e":""}"#,
        #"  {"s":"\"\\\/\b\f\n\r\t\u00e9\u20ac\ud83d\ude00 é €","n":9223372036854775807,"m":-9223372036854775808}  "#,
        #"{"frac":0.1,"exp":2E+2,"small":-4.5e-7}"#,
        #"{"environment":"Sandbox","data":{"bundleId":"com.example","signedTransactionInfo":"eyJ.x.y"}}"#,
    ]

    @Test(arguments: samples)
    func readsWhatFoundationReadsAlike(text: String) throws {
        let ours = try Self.parse(text)
        let theirs = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let a = try JSONSerialization.data(withJSONObject: Self.foundation(ours), options: [.sortedKeys])
        let b = try JSONSerialization.data(withJSONObject: theirs, options: [.sortedKeys])
        #expect(a == b, "\(String(decoding: a, as: UTF8.self)) != \(String(decoding: b, as: UTF8.self))")
    }

    @Test func stringsAreUnescapedWithSurrogatePairsJoined() throws {
        let o = try Self.parse(#"{"s":"a\"b\\c\/d\u0041\u00e9\ud83d\ude00\n"}"#)
        #expect(o["s"] == .string("a\"b\\c/dAé😀\n"))
    }

    @Test func integersStayExactAndOtherNumbersAreDoubles() throws {
        let o = try Self.parse(
            #"{"max":9223372036854775807,"min":-9223372036854775808,"big":9223372036854775808,"f":1.0,"e":1e2}"#)
        #expect(o["max"] == .integer(Int64.max))
        #expect(o["min"] == .integer(Int64.min))
        #expect(o["big"] == .double(9_223_372_036_854_775_808))
        #expect(o["f"] == .double(1))
        #expect(o["e"] == .double(100))
    }

    @Test func fieldsReadIntegersFromIntegralNumbersAndDecimalStrings() throws {
        let f = JWSFields(try Self.parse(#"{"a":5,"b":5.0,"c":5.5,"d":"12","e":true,"g":"x","h":1e19}"#))
        #expect(f.int64("a") == 5)
        #expect(f.int64("b") == 5)
        #expect(f.int64("c") == nil)
        #expect(f.int64("d") == 12)
        #expect(f.int64("e") == nil)
        #expect(f.int64("g") == nil)
        #expect(f.int64("h") == nil)
        #expect(f.double("c") == 5.5)
        #expect(f.bool("e") == true)
        #expect(f.string("a") == nil)
    }

    @Test(arguments: [
        (#"{"s":"\ud800"}"#, PayloadJSONError.Code.badString),
        (#"{"s":"\udc00x"}"#, .badString),
        (#"{"s":"\u12g4"}"#, .badString),
        (#"{"s":"\x"}"#, .badString),
        ("{\"s\":\"a\u{01}b\"}", .badString),
        (#"{"n":01}"#, .badNumber),
        (#"{"n":1.}"#, .badNumber),
        (#"{"n":-}"#, .badNumber),
        (#"{"n":1e}"#, .badNumber),
        (#"{"n":+1}"#, .unexpectedByte),
        (#"{"n":NaN}"#, .unexpectedByte),
        (#"{"a":1,}"#, .unexpectedByte),
        (#"{"a" 1}"#, .unexpectedByte),
        (#"{"a":tru}"#, .unexpectedByte),
        (#"{"a":1} x"#, .trailingBytes),
        (#"[1,2]"#, .notAnObject),
        (#""text""#, .notAnObject),
        ("", .truncated),
        (#"{"a":[1,2"#, .truncated),
    ])
    func malformedTextGetsASpecificError(text: String, code: PayloadJSONError.Code) {
        #expect(Self.errorCode(Array(text.utf8)) == code, "\(text)")
    }

    @Test func invalidUTF8InAStringIsRefused() {
        #expect(Self.errorCode(Array(#"{"s":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)) == .badString)
        #expect(Self.errorCode(Array(#"{"s":"\n"#.utf8) + [0xFF] + Array(#""}"#.utf8)) == .badString)
    }

    @Test func nestingStopsAtTheLimitWithoutExhaustingTheStack() throws {
        let ok =
            String(repeating: #"{"a":"#, count: PayloadJSON.maxDepth) + "1"
            + String(repeating: "}", count: PayloadJSON.maxDepth)
        #expect(throws: Never.self) { try Self.parse(ok) }
        let deeper = "{\"a\":" + ok + "}"
        #expect(Self.errorCode(Array(deeper.utf8)) == .tooDeep)
        #expect(Self.errorCode(Array(("{\"a\":" + String(repeating: "[", count: 100_000)).utf8)) == .tooDeep)
    }

    @Test func everyPrefixOfADocumentIsRefusedWithoutACrash() throws {
        let text = Array(Self.samples[2].utf8)
        let whole = text.count - 2  // the sample ends in two spaces
        for n in 0..<whole {
            #expect(Self.errorCode(Array(text[0..<n])) != nil, "prefix of \(n) bytes")
        }
        #expect(Self.errorCode(text) == nil)
    }
}
