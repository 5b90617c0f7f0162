import Testing

@testable import ReceiptSink

@Suite struct ByteArrayDictionaryTests {
    func index(_ d: inout ByteArrayDictionary, _ s: [UInt8]) -> (UInt32, Bool) {
        s.withUnsafeBytes { d.index(of: $0) }
    }

    /// The PLAIN encoding of `values`: u32 LE length, then the bytes, for each.
    func plain(_ values: [[UInt8]]) -> [UInt8] {
        values.flatMap { v in [UInt8(v.count & 0xFF), UInt8(v.count >> 8 & 0xFF), 0, 0] + v }
    }

    @Test func entriesKeepFirstSeenOrderAsAPlainPage() {
        var d = ByteArrayDictionary()
        let values: [[UInt8]] = [Array("b".utf8), [], Array("a".utf8), Array("b".utf8), [], Array("ab".utf8)]
        let got = values.map { index(&d, $0) }
        #expect(got.map(\.0) == [0, 1, 2, 0, 1, 3])
        #expect(got.map(\.1) == [true, true, true, false, false, true])
        #expect(d.count == 4)
        #expect(Array(d.plain) == plain([Array("b".utf8), [], Array("a".utf8), Array("ab".utf8)]))
        #expect(d.byteSize == d.plain.count)
        #expect(d.withEntry(3) { Array($0) } == Array("ab".utf8))
    }

    @Test func thousandsOfValuesSurviveRehashing() {
        var d = ByteArrayDictionary()
        let values = ByteBufferTests.samples()  // near-identical strings of every length 0...80
        for (i, v) in values.enumerated() {
            let (k, isNew) = index(&d, v)
            #expect(isNew && k == UInt32(i))
        }
        for (i, v) in values.enumerated().reversed() {
            let (k, isNew) = index(&d, v)
            #expect(!isNew && k == UInt32(i))
        }
        for n in 0..<5000 {
            let v = Array("com.example.product.\(n)".utf8)
            #expect(index(&d, v) == (UInt32(values.count + n), true))
        }
        #expect(index(&d, Array("com.example.product.17".utf8)) == (UInt32(values.count + 17), false))
        #expect(Array(d.plain) == plain(values + (0..<5000).map { Array("com.example.product.\($0)".utf8) }))
    }

    @Test func resetStartsAnEmptyDictionary() {
        var d = ByteArrayDictionary()
        for n in 0..<2000 { _ = index(&d, Array("v\(n)".utf8)) }
        d.reset()
        #expect(d.count == 0 && d.byteSize == 0)
        #expect(index(&d, Array("v1999".utf8)) == (0, true))
        #expect(index(&d, Array("v5".utf8)) == (1, true))
        #expect(index(&d, Array("v1999".utf8)) == (0, false))
    }
}
