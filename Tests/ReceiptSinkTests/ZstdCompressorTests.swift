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

    @Test func framesRoundTripAndKeepLiteralsCompressed() throws {
        let zstd = try ZstdCompressor(level: 1)
        // Hex text, then a repeated block: both the literal and the match paths are exercised.
        let input = Self.hexText(100_000) + Array(repeating: Array("receipt-0001".utf8), count: 2_000).flatMap { $0 }
        var sizes: [Int] = []
        for _ in 0..<2 {  // twice: one frame's state must not leak into the next frame
            let n = try input.withUnsafeBytes { try zstd.compress($0) }
            #expect(n == zstd.compressed.count)
            #expect(Self.decompress(zstd.compressed, size: input.count) == input)
            // Hex digits Huffman-code to about 4 bits each; stored as raw literals they would take 100,000 bytes.
            #expect(n < 60_000)
            sizes.append(n)
        }
        #expect(sizes[0] == sizes[1])
    }
}
