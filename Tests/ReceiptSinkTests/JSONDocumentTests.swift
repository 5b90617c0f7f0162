import Foundation
import ReceiptModel
import Testing

/// Whole documents: random trees written in every layout must parse (Foundation's parser) to the same values, keys
/// in the order given or sorted, and `Codable` values must encode as `JSONEncoder` encodes them.
@Suite struct JSONDocumentTests {
    private static func randomString(_ rng: inout TestRNG) -> String {
        let pool: [Unicode.Scalar] = ["\"", "\\", "/", "\n", "\u{1}", "a", "Z", "é", "\u{2029}", "😀", " ", ":", ","]
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...8, using: &rng) { s.append(pool.randomElement(using: &rng)!) }
        return String(s)
    }

    private static func randomDocument(_ rng: inout TestRNG, depth: Int) -> JSONDocument {
        switch Int.random(in: 0..<(depth < 5 ? 8 : 6), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .integer(Int64.random(in: .min ... .max, using: &rng) >> Int64.random(in: 0...63, using: &rng))
        case 3:
            let d = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng))
            return .double(d.isFinite ? d : 0.25)
        case 4, 5: return .string(randomString(&rng))
        case 6:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomDocument(&rng, depth: depth + 1) })
        default:
            var o = JSONObject()
            for _ in 0..<Int.random(in: 0...5, using: &rng) {
                o[randomString(&rng)] = randomDocument(&rng, depth: depth + 1)
            }
            return .object(o)
        }
    }

    /// Whether Foundation's reading of our text is `doc`.
    private static func same(_ parsed: Any, _ doc: JSONDocument) -> Bool {
        switch doc {
        case .null: return parsed is NSNull
        case .bool(let b):
            // Foundation gives a Bool, or a boolean NSNumber, depending on the platform.
            if type(of: parsed) == Bool.self { return parsed as? Bool == b }
            guard let n = parsed as? NSNumber, ["c", "B"].contains(String(cString: n.objCType)) else { return false }
            return n.boolValue == b
        case .integer(let i):
            return (parsed as? NSNumber)?.int64Value == i && (parsed as? NSNumber)?.stringValue == "\(i)"
        case .double(let d):
            // JSONSerialization on Linux can misread the last digits of a double (JSONTextTests checks the text
            // exactly through JSONDecoder); here a difference in the last digits is the parser's.
            guard let p = (parsed as? NSNumber)?.doubleValue else { return false }
            return p == d || (p - d).magnitude <= d.magnitude * 1e-13
        case .string(let s): return parsed as? String == s
        case .array(let a):
            guard let p = parsed as? [Any], p.count == a.count else { return false }
            return zip(p, a).allSatisfy { same($0, $1) }
        case .object(let o):
            guard let p = parsed as? [String: Any], p.count == o.members.count else { return false }
            return o.members.allSatisfy { m in p[m.key].map { same($0, m.value) } ?? false }
        }
    }

    @Test(arguments: [JSONWriter.Layout.compact, .indented, .indentedSpacedColon])
    func randomDocumentsReadBackInEveryLayout(layout: JSONWriter.Layout) throws {
        var rng = TestRNG(seed: 0xD0C)
        for _ in 0..<1500 {
            let doc = Self.randomDocument(&rng, depth: 0)
            for sorted in [false, true] {
                let text = doc.rendered(layout: layout, sortingKeys: sorted)
                let parsed = try JSONSerialization.jsonObject(with: Data(text), options: [.fragmentsAllowed])
                #expect(Self.same(parsed, doc), "\(String(decoding: text, as: UTF8.self))")
            }
        }
    }

    /// A decoded JWS payload is untrusted: nesting far deeper than the writer's bit mask covers must still work.
    @Test(arguments: [JSONWriter.Layout.compact, .indented, .indentedSpacedColon])
    func deepNestingReadsBack(layout: JSONWriter.Layout) throws {
        var doc: JSONDocument = ["leaf": [1, "x", []]]
        for level in 0..<300 { doc = level % 2 == 0 ? [doc, .null] : ["k\(level)": doc, "empty": [:]] }
        let text = doc.rendered(layout: layout)
        let parsed = try JSONSerialization.jsonObject(with: Data(text))
        #expect(Self.same(parsed, doc))
    }

    @Test func keepsTheOrderGivenOrSortsByBytes() {
        let doc: JSONDocument = ["b": 1, "a": ["z": true, "y": nil], "B": [], "é": "x"]
        #expect(String(decoding: doc.rendered(), as: UTF8.self) == #"{"b":1,"a":{"z":true,"y":null},"B":[],"é":"x"}"#)
        #expect(
            String(decoding: doc.rendered(sortingKeys: true), as: UTF8.self)
                == #"{"B":[],"a":{"y":null,"z":true},"b":1,"é":"x"}"#)
    }

    @Test func settingAKeyAgainReplacesItInPlace() {
        var o = JSONObject(["a": 1, "b": 2])
        o["a"] = 3
        o["c"] = nil
        o["b"] = nil
        #expect(o.members.map(\.key) == ["a"])
        #expect(o["a"] == .integer(3))
    }

    @Test func indentedLayouts() {
        let doc: JSONDocument = ["a": [1, ["b": "c"]], "e": [], "f": JSONDocument.object(JSONObject())]
        #expect(
            String(decoding: doc.rendered(layout: .indented, trailingNewline: true), as: UTF8.self) == """
                {
                  "a": [
                    1,
                    {
                      "b": "c"
                    }
                  ],
                  "e": [],
                  "f": {}
                }

                """)
        #expect(
            String(decoding: doc.rendered(layout: .indentedSpacedColon), as: UTF8.self)
                .contains("\n  \"a\" : [\n    1,\n    {\n      \"b\" : \"c\"\n    }\n  ],\n  \"e\" : [],"))
    }

    @Test func aWriterContinuingAnObjectWritesOnlyMembers() {
        var out = Array("{\"line\":3".utf8)
        var w = JSONWriter.continuingObject(hasMembers: true)
        w.key("a", into: &out)
        JSONText.appendInteger(Int64(1), into: &out)
        out.append(UInt8(ascii: "}"))
        #expect(String(decoding: out, as: UTF8.self) == #"{"line":3,"a":1}"#)

        out = []
        w = JSONWriter.continuingObject(hasMembers: false)
        w.key("b", into: &out)
        JSONText.appendNull(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == #""b":null"#)
    }

    // MARK: - Codable

    struct Inner: Codable, Equatable {
        var name: String
        var tags: [String]
        var note: String?
    }

    struct Outer: Codable, Equatable {
        var version = 1
        var ratio = 0.924_303_582_000_000_1
        var big: UInt64 = 9_007_199_254_740_993
        var flag = true
        var counts: [String: Int] = ["21002": 4, "invalid_json": 0]
        var items = [Inner(name: "a/b", tags: [], note: nil), Inner(name: "\"q\"\n", tags: ["x", "y"], note: "é")]
        var nested: [[Int]] = [[1, 2], []]
        var missing: Int? = nil

        enum CodingKeys: String, CodingKey {
            case version, ratio, big, flag, counts, items, nested, missing
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(version, forKey: .version)
            try c.encode(ratio, forKey: .ratio)
            try c.encode(big, forKey: .big)
            try c.encode(flag, forKey: .flag)
            try c.encode(counts, forKey: .counts)
            try c.encode(items, forKey: .items)
            var n = c.nestedUnkeyedContainer(forKey: .nested)
            for row in nested { try n.encode(row) }
            try c.encodeIfPresent(missing, forKey: .missing)
        }
    }

    @Test func encodesCodableValuesAsJSONEncoderDoes() throws {
        let value = Outer()
        let ours = try JSONDocumentEncoder.encode(value).rendered(layout: .indentedSpacedColon, sortingKeys: true)
        #expect(try JSONDecoder().decode(Outer.self, from: Data(ours)) == value)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let theirs = try JSONSerialization.jsonObject(with: encoder.encode(value)) as! NSDictionary
        #expect(try JSONSerialization.jsonObject(with: Data(ours)) as! NSDictionary == theirs)
        #expect(!String(decoding: ours, as: UTF8.self).contains("missing"))
    }

    @Test func refusesAnUnsignedValueBeyondInt64() {
        #expect(throws: EncodingError.self) { _ = try JSONDocumentEncoder.encode(["x": UInt64.max]) }
    }
}
