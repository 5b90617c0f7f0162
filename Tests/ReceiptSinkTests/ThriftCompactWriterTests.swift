import Testing

@testable import ReceiptSink

@Suite struct ThriftCompactWriterTests {
    @Test func shortFieldHeadersCarryTheIdDelta() {
        var w = ThriftCompactWriter()
        w.i32(1, 0)
        w.i32(2, 24)
        w.i64(5, -1)
        w.stop()
        // (delta << 4) | type, then zigzag varints: 0 -> 00, 24 -> 30, -1 -> 01.
        #expect(w.bytes == [0x15, 0x00, 0x15, 0x30, 0x36, 0x01, 0x00])
    }

    @Test func longFieldHeaderWhenTheDeltaExceedsFifteen() {
        var w = ThriftCompactWriter()
        w.i32(1, 1)
        w.i32(20, 1)
        #expect(w.bytes == [0x15, 0x02, 0x05, 0x28, 0x02])
    }

    @Test func nestedStructsRestartTheirFieldIds() {
        var w = ThriftCompactWriter()
        w.i32(3, 7)
        w.structBegin(5)
        w.i32(1, 3)
        w.structEnd()
        w.i32(6, 1)
        w.stop()
        #expect(w.bytes == [0x35, 0x0E, 0x2C, 0x15, 0x06, 0x00, 0x15, 0x02, 0x00])
    }

    @Test func boolsLiveInTheTypeNibbleAndI8IsOneRawByte() {
        var w = ThriftCompactWriter()
        w.i8(1, 64)
        w.bool(2, true)
        w.bool(3, false)
        #expect(w.bytes == [0x13, 0x40, 0x11, 0x12])  // each field id is one past the last
    }

    @Test func varintsSpanSeveralBytes() {
        var w = ThriftCompactWriter()
        w.i64(1, 1_000_000)  // zigzag 2_000_000 = 0x1E8480
        #expect(w.bytes == [0x16, 0x80, 0x89, 0x7A])
    }

    @Test func listsOfMoreThanFourteenElementsUseTheLongHeader() {
        var w = ThriftCompactWriter()
        w.listBegin(1, .i32, count: 15)
        #expect(w.bytes == [0x19, 0xF5, 0x0F])
        var s = ThriftCompactWriter()
        s.listBegin(2, .structure, count: 3)
        #expect(s.bytes == [0x29, 0x3C])
    }

    @Test func binaryFieldsAreLengthPrefixed() {
        var w = ThriftCompactWriter()
        w.string(4, "name")
        #expect(w.bytes == [0x48, 0x04] + Array("name".utf8))
    }
}
