import ReceiptIO
import ReceiptModel
import Testing

/// Scans `line` and returns the result plus the unescaped receipt and id strings.
private func scan(_ line: String, field: String? = nil, idField: String? = "id")
    -> (NDJSONRecord, receipt: String?, id: String?)
{
    let scanner = NDJSONScanner(field: field, idField: idField)
    let bytes = Array(line.utf8)
    return bytes.withUnsafeBytes { p in
        let r = scanner.scan(p)
        func text(_ ref: JSONStringRef) -> String {
            let raw = UnsafeRawBufferPointer(rebasing: p[ref.range])
            var out = [UInt8](repeating: 0, count: raw.count)
            let n = out.withUnsafeMutableBytes { JSONString.unescape(raw, into: $0) }
            return String(decoding: out[0..<n], as: UTF8.self)
        }
        let receipt = r.error == nil ? text(r.receipt) : nil
        var id: String? = nil
        switch r.id {
        case .string(let ref): id = text(ref)
        case .number(let range): id = String(decoding: p[range], as: UTF8.self)
        default: id = nil
        }
        return (r, receipt, id)
    }
}

@Suite struct NDJSONScannerTests {
    @Test func findsTheReceiptAndIdInAPlainObject() {
        let (r, receipt, id) = scan(#"{"id":"u1","receipt-data":"MIAG"}"#)
        #expect(r.error == nil)
        #expect(receipt == "MIAG")
        #expect(id == "u1")
        #expect(r.receipt.escaped == false)
    }

    @Test func resolvesEscapedSlashUnicodeAndNewlineEscapesInTheReceipt() {
        let (r, receipt, _) = scan(#"{"receipt":"ab\/cd\u002B\n=="}"#)
        #expect(r.error == nil && r.receipt.escaped)
        #expect(receipt == "ab/cd+\n==")
    }

    @Test func acceptsKeysInAnyOrderAndWhitespaceEverywhere() {
        let (r, receipt, id) = scan(
            " \t{ \"other\" : [1, 2, {\"x\": null}] ,\r\n \"receipt_data\" :\t\"QUJD\" , \"id\": 42 } ")
        #expect(r.error == nil)
        #expect(receipt == "QUJD")
        #expect(id == "42")
    }

    @Test func ignoresTheSameKeyInsideANestedObjectOrArray() {
        let (r, receipt, id) = scan(
            #"{"meta":{"receipt":"NESTED","id":"inner"},"list":[{"receipt":"X"}],"receipt":"TOP","id":"outer"}"#)
        #expect(r.error == nil)
        #expect(receipt == "TOP")
        #expect(id == "outer")
        let (onlyNested, _, _) = scan(#"{"meta":{"receipt":"NESTED"}}"#)
        #expect(onlyNested.error == .missingField)
    }

    @Test func ignoresTheKeyNameAppearingInsideStringValues() {
        let (r, receipt, _) = scan(#"{"note":"\"receipt\":\"FAKE\"","receipt":"REAL"}"#)
        #expect(r.error == nil)
        #expect(receipt == "REAL")
    }

    @Test func findsTheUserFieldOfAnyValueKindOnlyWhenNamed() {
        let s = NDJSONScanner(userField: "user_id")
        func user(_ line: String) -> JSONValue {
            var bytes = Array(line.utf8)
            return bytes.withUnsafeMutableBytes { s.scan(UnsafeRawBufferPointer($0)).user }
        }
        #expect(
            user(#"{"receipt-data":"QUJD","user_id":"u-1"}"#) == .string(JSONStringRef(range: 34..<37, escaped: false)))
        #expect(user(#"{"user_id":48213,"receipt-data":"QUJD"}"#) == .number(11..<16))
        #expect(user(#"{"user_id":true,"receipt-data":"QUJD"}"#) == .bool(true))
        #expect(user(#"{"user_id":null,"receipt-data":"QUJD"}"#) == .null)
        #expect(user(#"{"meta":{"user_id":"x"},"receipt-data":"QUJD"}"#) == .absent)
        #expect(
            user(#"{"user_id":"a","user_id":"b","receipt-data":"QUJD"}"#)
                == .string(JSONStringRef(range: 26..<27, escaped: false)))
        var line = Array(#"{"user_id":7,"receipt-data":"QUJD"}"#.utf8)
        let without = line.withUnsafeMutableBytes { NDJSONScanner().scan(UnsafeRawBufferPointer($0)) }
        #expect(without.user == .absent)
    }

    @Test func takesTheLastOfDuplicateKeys() {
        let (_, receipt, id) = scan(#"{"receipt":"FIRST","id":1,"receipt":"LAST","id":2}"#)
        #expect(receipt == "LAST")
        #expect(id == "2")
    }

    @Test func prefersReceiptDataOverReceiptUnderscoreDataOverReceipt() {
        #expect(scan(#"{"receipt":"C","receipt_data":"B","receipt-data":"A"}"#).receipt == "A")
        #expect(scan(#"{"receipt":"C","receipt_data":"B"}"#).receipt == "B")
    }

    @Test func usesOnlyTheConfiguredFieldWhenOneIsGiven() {
        #expect(scan(#"{"receipt":"C","payload":"P"}"#, field: "payload").receipt == "P")
        #expect(scan(#"{"receipt":"C"}"#, field: "payload").0.error == .missingField)
    }

    @Test func matchesAKeyWrittenWithEscapes() {
        #expect(scan(#"{"receipt\u002Ddata":"K"}"#).receipt == "K")
    }

    @Test func reportsMissingNullAndNonStringReceiptsAsMissingField() {
        for line in [
            #"{"id":"a"}"#, #"{"receipt":null}"#, #"{"receipt":5}"#, #"{"receipt":{"a":"b"}}"#, #"{"receipt":["x"]}"#,
            #"{"receipt":true}"#, "{}",
        ] {
            let (r, _, _) = scan(line)
            #expect(r.error == .missingField, "\(line)")
        }
        // The id is still reported for a readable object.
        #expect(scan(#"{"id":"a"}"#).id == "a")
    }

    @Test func reportsAnEmptyReceiptString() {
        #expect(scan(#"{"receipt":""}"#).0.error == .emptyReceipt)
    }

    @Test(arguments: [
        "", "   ", "MIAGCSqGSIb3", "[]", "[{\"receipt\":\"A\"}]", "\"receipt\"", "{", "{\"receipt\":\"A\"",
        "{\"receipt\":\"A\",}", "{\"receipt\":\"A\"} x", "{\"receipt\":\"A\"}{}", "{\"receipt\" \"A\"}",
        "{receipt:\"A\"}",
        "{\"receipt\":\"A\\q\"}", "{\"receipt\":\"A\\u12G4\"}", "{\"receipt\":\"A\tB\"}", "{\"a\":01}", "{\"a\":1.}",
        "{\"a\":-}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":[1,]}", "{\"a\":[1 2]}", "{\"a\":{\"b\":1]}", "{\"a\":[}",
        "{\"a\":1,,\"receipt\":\"A\"}", "{\"receipt\":'A'}",
    ])
    func rejectsWhatIsNotAJSONObject(line: String) {
        let (r, _, _) = scan(line)
        #expect(r.error == .invalidJSON)
        #expect(r.id == .absent)
    }

    @Test func acceptsEveryValueKindOfTheJSONGrammar() {
        let line =
            #"{"a":[true,false,null,-0,1.5e-3,2E+10,"s\\\"\b\f\r\t\u00e9\ud83d\ude00"],"b":{},"c":[],"receipt":"QQ=="}"#
        let (r, receipt, _) = scan(line)
        #expect(r.error == nil)
        #expect(receipt == "QQ==")
    }

    @Test func limitsNestingDepthWithoutRecursion() {
        let deep = "{\"a\":" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        #expect(scan(deep).0.error == .invalidJSON)
        let ok =
            "{\"a\":" + String(repeating: "[", count: 60) + String(repeating: "]", count: 60) + ",\"receipt\":\"QQ\"}"
        #expect(scan(ok).0.error == nil)
    }

    @Test func findsQuotesEscapesAndControlBytesAtEveryOffsetOfTheWordAtATimeScan() {
        for k in 0..<24 {
            let pad = String(repeating: "A", count: k)
            // An escaped quote k bytes in, then more text: the string must not end at the escaped quote.
            let (r, receipt, _) = scan("{\"receipt\":\"\(pad)\\\"\(pad)B\"}")
            #expect(r.error == nil && r.receipt.escaped, "k=\(k)")
            #expect(receipt == pad + "\"" + pad + "B")
            // A raw tab k bytes in is invalid JSON wherever it falls.
            #expect(scan("{\"receipt\":\"\(pad)\t\(pad)\"}").0.error == .invalidJSON, "k=\(k)")
            // Non-ASCII bytes are ordinary string content.
            #expect(scan("{\"receipt\":\"\(pad)é€\(pad)\"}").receipt == pad + "é€" + pad)
            // The closing quote k bytes in.
            #expect(scan("{\"receipt\":\"\(pad)Q\",\"id\":1}").receipt == pad + "Q")
        }
    }

    @Test func rejectsStringsThatAreNotUTF8AtEveryOffset() {
        let bad: [[UInt8]] = [
            [0xFF], [0xC0, 0xAF], [0xC3], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF0, 0x9F, 0x98], [0x80],
        ]
        let good: [[UInt8]] = [[0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xED, 0x9F, 0xBF], [0xF0, 0x9F, 0x98, 0x80]]
        for k in 0..<12 {
            let pad = [UInt8](repeating: 0x41, count: k)
            func line(_ s: [UInt8]) -> [UInt8] {
                Array(#"{"id":""#.utf8) + pad + s + pad + Array(#"","receipt":"QQ"}"#.utf8)
            }
            for s in bad {
                let r = line(s).withUnsafeBytes { NDJSONScanner().scan($0) }
                #expect(r.error == .invalidJSON, "\(s) at \(k)")
            }
            for s in good {
                let r = line(s).withUnsafeBytes { NDJSONScanner().scan($0) }
                #expect(r.error == nil, "\(s) at \(k)")
            }
        }
    }

    @Test func reportsNumberAndStringIdsAndNothingForOtherKinds() {
        #expect(scan(#"{"id":-12.5e3,"receipt":"QQ"}"#).id == "-12.5e3")
        #expect(scan(#"{"id":"a\"b","receipt":"QQ"}"#).id == "a\"b")
        #expect(scan(#"{"id":null,"receipt":"QQ"}"#).id == nil)
        #expect(scan(#"{"userId":"x","receipt":"QQ"}"#, idField: "userId").id == "x")
    }
}
