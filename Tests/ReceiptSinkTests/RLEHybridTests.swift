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
