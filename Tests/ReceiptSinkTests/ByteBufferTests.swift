import Testing

@testable import ReceiptSink

@Suite struct ByteBufferTests {
    @Test func appendsSurviveGrowthAndPatchesOverwriteInPlace() {
        var b = ByteBuffer(capacity: 1)
        var expected: [UInt8] = []
        for i in 0..<3000 {
            let chunk = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: i % 17)
            chunk.withUnsafeBytes { b.append($0) }
            expected += chunk
            b.append(UInt8(truncatingIfNeeded: i * 7))
            expected.append(UInt8(truncatingIfNeeded: i * 7))
            b.appendLittleEndian(UInt32(i))
            expected += [UInt8(i & 0xFF), UInt8(i >> 8), 0, 0]
        }
        b.patchUInt32(0xA1B2_C3D4, at: 5)
        expected.replaceSubrange(5..<9, with: [0xD4, 0xC3, 0xB2, 0xA1])
        #expect(Array(b.bytes) == expected)
        b.removeAll()
        #expect(b.count == 0)
        b.append(9)
        #expect(Array(b.bytes) == [9])
    }

    @Test func prefixLandsJustBeforeTheBytesThroughGrowth() {
        var b = ByteBuffer(headroom: 20)  // rounded up to 32, keeping the bytes 16-aligned
        #expect(b.headroom == 32)
        var expected: [UInt8] = []
        for i in 0..<500 {  // grows several times from 64 bytes
            b.appendLittleEndian(UInt32(i * 2_654_435_761 & 0xFFFF_FFFF))
            expected += withUnsafeBytes(of: UInt32(i * 2_654_435_761 & 0xFFFF_FFFF).littleEndian) { Array($0) }
            #expect(Int(bitPattern: b.base) % 16 == 0)
        }
        let prefix = (0..<32).map { UInt8($0 + 1) }
        for k in [0, 1, 17, 32] {
            let span = prefix[..<k].withUnsafeBytes { b.spanWithPrefix($0) }
            #expect(span.map { Array($0) } == Array(prefix[..<k]) + expected)
        }
        #expect(prefix.withUnsafeBytes { b.spanWithPrefix($0) } != nil)
        #expect((prefix + [0]).withUnsafeBytes { b.spanWithPrefix($0) } == nil)
        #expect(Array(b.bytes) == expected)  // the prefix never overwrites the bytes
        var none = ByteBuffer()
        #expect([UInt8(1)].withUnsafeBytes { none.spanWithPrefix($0) } == nil)
        #expect([UInt8]().withUnsafeBytes { none.spanWithPrefix($0) }?.count == 0)
    }

    @Test func largeGrowthKeepsBytesAndHeadroom() {
        // Past malloc's mmap threshold (128 KB by default) realloc remaps instead of copying: the bytes, the
        // alignment and the headroom must survive either way.
        var b = ByteBuffer(headroom: 64)
        var state: UInt64 = 7
        var expected: [UInt8] = []
        expected.reserveCapacity(3 << 20)
        while b.count < 3 << 20 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let chunk = withUnsafeBytes(of: state) { Array($0) } + [UInt8](repeating: UInt8(state >> 59), count: 4091)
            chunk.withUnsafeBytes { b.append($0) }
            expected += chunk
            #expect(Int(bitPattern: b.base) % 16 == 0)
        }
        #expect(Array(b.bytes) == expected)
        let prefix = [UInt8](repeating: 0xAB, count: 64)
        #expect(prefix.withUnsafeBytes { b.spanWithPrefix($0) }.map { Array($0) } == prefix + expected)
    }

    @Test func reservedRoomTakesUncheckedStores() {
        var b = ByteBuffer()
        b.reserve(1000)
        for i in 0..<100 { b.storeLittleEndian(Int64(i) - 50) }
        b.store(0xEE)
        #expect(b.count == 801)
        #expect(b.bytes.loadUnaligned(fromByteOffset: 8 * 3, as: Int64.self) == -47)
        #expect(b.bytes[800] == 0xEE)
    }

    @Test func rawArrayGrowsFillsAndIndexes() {
        var a = RawArray<Int32>(capacity: 2)
        for i in 0..<100 { a.append(Int32(i)) }
        a.append(-1, count: 50)
        #expect(a.count == 150)
        #expect(a[99] == 99 && a[100] == -1 && a[149] == -1)
        a[3] = 42
        #expect(a[3] == 42)
        a.fill(7)
        #expect((0..<150).allSatisfy { a[$0] == 7 })
        a.removeAll()
        #expect(a.count == 0)
    }

    /// Byte strings that exercise every branch of the word-at-a-time helpers: lengths 0 to 80, shared prefixes,
    /// differences in the first, middle and last byte, bytes above 0x7F (unsigned order).
    static func samples() -> [[UInt8]] {
        var out: [[UInt8]] = [[]]
        for n in 1...80 {
            let base = (0..<n).map { UInt8(truncatingIfNeeded: 0x61 + $0 % 26) }
            out.append(base)
            for k in Set([0, n / 2, n - 1]) {
                var v = base
                v[k] = 0xF0
                out.append(v)
                v[k] = 0x00
                out.append(v)
            }
        }
        return out
    }

    static func reference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    @Test func compareAndEqualityAgreeWithByteByByteOrder() {
        let s = Self.samples()
        for a in s {
            for b in s where abs(a.count - b.count) <= 9 {
                a.withUnsafeBytes { pa in
                    b.withUnsafeBytes { pb in
                        #expect(compareBytes(pa, pb) == Self.reference(a, b), "\(a) vs \(b)")
                        if a.count == b.count && a.count > 0 {
                            #expect(bytesEqual(pa.baseAddress!, pb.baseAddress!, a.count) == (a == b))
                        }
                    }
                }
            }
        }
    }

    @Test func copyShortCopiesExactlyTheValue() {
        for v in Self.samples() {
            var dst = [UInt8](repeating: 0xCC, count: v.count + 8)
            v.withUnsafeBytes { src in dst.withUnsafeMutableBytes { copyShort(into: $0.baseAddress!, from: src) } }
            #expect(Array(dst[0..<v.count]) == v)
            #expect(dst[v.count...].allSatisfy { $0 == 0xCC })
        }
    }
}
