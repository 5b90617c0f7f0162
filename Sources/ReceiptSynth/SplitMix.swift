/// SplitMix64: a small, fast, seedable generator. Each record gets its own from (seed, index), so records can be
/// made on any thread in any order and the output is still a pure function of the seed.
public struct SplitMix: Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A generator for record `index` of a run seeded with `seed`.
    public init(seed: UInt64, index: Int) {
        var s = SplitMix(seed: seed ^ 0x5851_F42D_4C95_7F2D)
        let a = s.next()
        var t = SplitMix(seed: a &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        state = t.next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `0..<n` (n > 0).
    public mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// Uniform in `range`.
    public mutating func int(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { unit() < p }

    public mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }

    /// Picks an index with the given relative weights.
    public mutating func weighted(_ weights: [Double]) -> Int {
        var x = unit() * weights.reduce(0, +)
        for (i, w) in weights.enumerated() {
            if x < w { return i }
            x -= w
        }
        return weights.count - 1
    }

    public mutating func bytes(_ n: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(n + 8)
        while out.count < n { withUnsafeBytes(of: next()) { out += $0 } }
        return Array(out.prefix(n))
    }

    public mutating func shuffle<T>(_ a: inout [T]) {
        guard a.count > 1 else { return }
        for i in stride(from: a.count - 1, to: 0, by: -1) { a.swapAt(i, int(i + 1)) }
    }
}
