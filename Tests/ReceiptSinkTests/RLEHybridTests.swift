import Testing

@testable import ReceiptSink

@Suite struct RLEHybridTests {
    func encode(_ v: [UInt32], width: Int) -> [UInt8] {
        var out = ByteBuffer()
        v.withUnsafeBufferPointer { RLEHybrid.encode($0, bitWidth: width, into: &out) }
        return Array(out.bytes)
    }

    @Test func longRunsBecomeRLERuns() {
        #expect(encode(Array(repeating: 1, count: 100), width: 1) == [0xC8, 0x01, 0x01])  // varint(100 << 1), value
        #expect(encode(Array(repeating: 300, count: 8), width: 9) == [0x10, 0x2C, 0x01])  // value in 2 bytes LE
    }

    @Test func shortRunsAreBitPackedLSBFirstAndOnlyTheLastRunIsPadded() {
        // 8 mixed values, then a run of 10 zeros, then 2 values: packed group, RLE run, padded final group.
        let v: [UInt32] = [1, 0, 1, 1, 0, 0, 0, 1] + Array(repeating: 0, count: 10) + [1, 1]
        #expect(encode(v, width: 1) == [0x03, 0x8D, 0x14, 0x00, 0x03, 0x03])
    }

    @Test func wideValuesPackAcrossBytes() {
        // Width 3, values 0...7: bits 000 100 010 110 001 101 011 111 (LSB first) = 0x88 0xC6 0xFA.
        #expect(encode([0, 1, 2, 3, 4, 5, 6, 7], width: 3) == [0x03, 0x88, 0xC6, 0xFA])
    }

    @Test func bitWidthIsAtLeastOne() {
        #expect(RLEHybrid.bitWidth(forMax: 0) == 1)
        #expect(RLEHybrid.bitWidth(forMax: 1) == 1)
        #expect(RLEHybrid.bitWidth(forMax: 2) == 2)
        #expect(RLEHybrid.bitWidth(forMax: 255) == 8)
        #expect(RLEHybrid.bitWidth(forMax: 256) == 9)
    }
}

extension RLEHybridTests {
    /// Definition levels take a byte-wide path (word compares for runs, one multiply per packed group); it must
    /// give exactly the bytes of the general path on the same values.
    @Test func levelBytesEncodeLikeTheGeneralPath() {
        var seed: UInt64 = 7
        for n in [1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200, 1000] {
            for density in [0, 1, 2, 5, 50, 95, 100] {
                let levels: [UInt8] = (0..<n).map { i in
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    // Runs of 1 to 20 equal values interleave with noise, so both RLE and packed runs occur.
                    return (i / (1 + Int(seed >> 60))) % 3 == 0 ? 1 : UInt8(Int(seed >> 33) % 100 < density ? 1 : 0)
                }
                var fast = ByteBuffer()
                levels.withUnsafeBufferPointer { RLEHybrid.encode($0, bitWidth: 1, into: &fast) }
                #expect(Array(fast.bytes) == encode(levels.map { UInt32($0) }, width: 1), "n \(n) density \(density)")
            }
        }
    }
}
