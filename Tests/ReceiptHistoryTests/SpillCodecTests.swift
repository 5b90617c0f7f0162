import Testing

@testable import ReceiptHistory

/// The spill's number codings read back what they wrote, and refuse what no writer makes.
@Suite struct SpillCodecTests {
    static let values: [Int64] = [0, 1, -1, 63, -64, 64, 127, 128, 1 << 32, 1_714_521_600_000, Int64.max, Int64.min]

    static func read<T>(_ w: SpillWriter, _ body: (inout SpillReader) throws(HistoryError) -> T) throws -> T {
        try w.bytes.withUnsafeBytes { p in
            var r = SpillReader(p)
            let v = try body(&r)
            #expect(r.atEnd)
            return v
        }
    }

    @Test func zigzagVarintsAndOptionalsRoundTripAtTheExtremes() throws {
        for v in Self.values {
            var w = SpillWriter()
            w.zigzag(v)
            #expect(try Self.read(w) { r throws(HistoryError) in try r.zigzag() } == v)
            var o = SpillWriter()
            o.optional(v)
            #expect(try Self.read(o) { r throws(HistoryError) in try r.optional() } == v)
        }
        var none = SpillWriter()
        none.optional(nil)
        #expect(none.bytes == [0])
        #expect(try Self.read(none) { r throws(HistoryError) in try r.optional() } == nil)
        // Small magnitudes take one byte.
        var small = SpillWriter()
        small.zigzag(-3)
        small.optional(5)
        #expect(small.bytes.count == 2)
    }

    @Test func aVarintBeyondSixtyFourBitsIsADamagedSpill() {
        let tooLong = SpillWriter(bytes: Array(repeating: 0xFF, count: 9) + [0x7F])
        #expect(throws: HistoryError.self) { try Self.read(tooLong) { r throws(HistoryError) in try r.varint() } }
        let cut = SpillWriter(bytes: [0x80, 0x80])
        #expect(throws: HistoryError.self) { try Self.read(cut) { r throws(HistoryError) in try r.varint() } }
    }
}
