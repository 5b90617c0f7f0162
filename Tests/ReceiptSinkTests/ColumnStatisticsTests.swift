import Testing

@testable import ReceiptSink

/// String bounds are the exact unsigned-byte min and max, however the values share or differ in their first 16
/// bytes (which `ColumnStatistics` compares as two words before it compares whole values).
@Suite struct ColumnStatisticsTests {
    /// Values built to land on every side of the 16-byte keys: shared 16-byte prefixes that differ after them,
    /// values that are prefixes of others, zero bytes (equal to the keys' padding), bytes above 0x7F, lengths
    /// 0 to 40 around 8 and 16.
    static func values(seed: UInt64, count: Int) -> [[UInt8]] {
        var state = seed
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        let stems: [[UInt8]] = [
            Array("617305716673576".utf8), Array("rcpt-2-1000".utf8), Array("0123456789abcdef".utf8),
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0xFF, 0xFE, 0x80, 0x7F, 0x01, 0x00, 0x41, 0x42],
        ]
        return (0..<count).map { _ in
            var v = stems[next() % stems.count]
            let cut = next() % 3 == 0 ? next() % (v.count + 1) : v.count
            v = Array(v.prefix(cut))
            for _ in 0..<(next() % 25) { v.append([0, 0x30, 0x39, 0x61, 0x80, 0xFF][next() % 6]) }
            if !v.isEmpty && next() % 4 == 0 { v[next() % v.count] = UInt8(next() & 0xFF) }
            return v
        }
    }

    static func lexicographicallyLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        for (x, y) in zip(a, b) where x != y { return x < y }
        return a.count < b.count
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func stringBoundsAreTheExactMinAndMax(seed: UInt64) {
        let values = Self.values(seed: seed, count: 3000)
        var stats = ColumnStatistics()
        for round in 0..<2 {  // twice: reset must forget the first round's bounds
            let slice = round == 0 ? values : Array(values.suffix(700))
            for v in slice { v.withUnsafeBytes { stats.update($0) } }
            var minValue: [UInt8] = []
            var maxValue: [UInt8] = []
            #expect(stats.appendBound(min: true, type: .byteArray, into: &minValue))
            #expect(stats.appendBound(min: false, type: .byteArray, into: &maxValue))
            #expect(minValue == slice.min(by: Self.lexicographicallyLess))
            #expect(maxValue == slice.max(by: Self.lexicographicallyLess))
            stats.reset()
        }
    }

    @Test func keysOrderLikeTheValuesTheyStart() {
        let values = Self.values(seed: 9, count: 400)
        for a in values {
            for b in values where a != b {
                let (ka, kb) = a.withUnsafeBytes { pa in
                    b.withUnsafeBytes { (ColumnStatistics.key(pa), ColumnStatistics.key($0)) }
                }
                if ka != kb { #expect((ka < kb) == Self.lexicographicallyLess(a, b)) }
            }
            if a.count >= 8 {
                a.withUnsafeBytes { p in #expect(ColumnStatistics.wordKey(p) == ColumnStatistics.key(p)) }
            }
        }
    }
}
