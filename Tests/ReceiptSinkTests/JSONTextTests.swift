import Testing

@testable import ReceiptSink

@Suite struct JSONTextTests {
    @Test func escapesQuotesBackslashesAndControlCharacters() {
        var out: [UInt8] = []
        JSONText.appendString("a\"b\\c\nd\u{1}é", into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "\"a\\\"b\\\\c\\nd\\u0001é\"")
    }

    @Test func arraysOfStrings() {
        var out: [UInt8] = []
        JSONText.appendStringArray(["x", "y,z"], into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "[\"x\",\"y,z\"]")
    }
}
