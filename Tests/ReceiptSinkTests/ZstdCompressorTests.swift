import CZstd
import Testing

@testable import ReceiptSink

/// Page frames made with a per-column search target length are ordinary zstd frames, and the faster search still
/// Huffman-codes the literals (zstd drops literal compression by default once a target length is set).
@Suite struct ZstdCompressorTests {
    /// `count` lowercase hex digits from a fixed linear congruential sequence: no long repeats, 4 bits per byte.
    static func hexText(_ count: Int) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let digits = Array("0123456789abcdef".utf8)
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return digits[Int(state >> 60)]
        }
    }

    static func decompress(_ frame: UnsafeRawBufferPointer, size: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: size)
        let n = out.withUnsafeMutableBytes { ZSTD_decompress($0.baseAddress, size, frame.baseAddress, frame.count) }
        return ZSTD_isError(n) == 0 && n == size ? out : nil
    }

    @Test(arguments: [0, 4, 64, 0, 64] as [Int32])
    func framesRoundTripAndKeepLiteralsCompressed(targetLength: Int32) throws {
        let zstd = try ZstdCompressor(level: 1)
        // Hex text, then a repeated block: both the literal and the match paths are exercised.
        let input = Self.hexText(100_000) + Array(repeating: Array("receipt-0001".utf8), count: 2_000).flatMap { $0 }
        for _ in 0..<2 {  // twice: the parameters set by one call must not leak into the next frame's validity
            let n = try input.withUnsafeBytes { try zstd.compress($0, targetLength: targetLength) }
            #expect(n == zstd.compressed.count)
            #expect(Self.decompress(zstd.compressed, size: input.count) == input)
            // Hex digits Huffman-code to about 4 bits each; stored as raw literals they would take 100,000 bytes.
            #expect(n < 60_000)
        }
    }

    @Test func changingTheTargetLengthBetweenCallsKeepsEachFrameCorrect() throws {
        let zstd = try ZstdCompressor(level: 1)
        let input = Self.hexText(50_000)
        var sizes: [Int: Int] = [:]
        for t in [0, 64, 4, 0, 64] as [Int32] {
            let n = try input.withUnsafeBytes { try zstd.compress($0, targetLength: t) }
            #expect(Self.decompress(zstd.compressed, size: input.count) == input)
            // The same input and target length give the same frame size however the context was used before.
            if let previous = sizes[Int(t)] { #expect(previous == n) }
            sizes[Int(t)] = n
        }
    }
}
