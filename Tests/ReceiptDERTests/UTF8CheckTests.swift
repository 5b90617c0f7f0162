import ReceiptDER
import ReceiptSynth
import Testing

/// `UTF8Check.isValidText` against the standard library's UTF-8 validation (which also rejects overlongs,
/// surrogates and values past U+10FFFF), plus the NUL rule, over strings built to put every kind of character
/// and error at every position relative to the 8-octet words of the ASCII fast path.
@Suite struct UTF8CheckTests {
    static func check(_ bytes: [UInt8]) -> Bool {
        // An exactly sized heap copy: a read past the end would hit the allocator's guard in ASan runs.
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { buf.deallocate() }
        buf.copyBytes(from: bytes)
        return UTF8Check.isValidText(UnsafeRawBufferPointer(buf))
    }

    static func reference(_ bytes: [UInt8]) -> Bool {
        !bytes.contains(0) && String(validating: bytes, as: UTF8.self) != nil
    }

    /// Pieces to splice: ASCII, valid multi-octet characters, and each kind of invalid sequence.
    static let pieces: [[UInt8]] = [
        [0x41], [0x7F], [0x00], Array("receipt".utf8), Array("0123456789abcdef".utf8),
        [0xC3, 0xA9], [0xE4, 0xB8, 0xAD], [0xF0, 0x9F, 0x98, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xEF, 0xBF, 0xBF],
        [0x80], [0xBF], [0xC0, 0xAF], [0xC1, 0xBF], [0xC3], [0xE4, 0xB8], [0xF0, 0x9F, 0x98], [0xE0, 0x80, 0xAF],
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0xAF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80],
        [0xFF], [0xC3, 0x41], [0xE4, 0x41, 0xAD],
    ]

    @Test func agreesWithTheStandardLibrary() {
        var rng = SplitMix(seed: 0x07F8)
        var valid = 0
        var invalid = 0
        for _ in 0..<40_000 {
            var bytes: [UInt8] = []
            // Mostly ASCII runs of random length, so that the odd piece lands anywhere in or across a word.
            for _ in 0..<(Int(rng.next() % 6)) {
                bytes += Array(repeating: 0x61, count: Int(rng.next() % 12))
                if rng.next() % 3 == 0 { bytes += Self.pieces[Int(rng.next() % UInt64(Self.pieces.count))] }
            }
            let expected = Self.reference(bytes)
            #expect(Self.check(bytes) == expected, "\(bytes)")
            if expected { valid += 1 } else { invalid += 1 }
        }
        #expect(valid > 10_000 && invalid > 10_000)
    }

    @Test func everySingleBadOctetIsFoundAtEveryPosition() {
        for n in 1...40 {
            let ascii = Array(repeating: UInt8(0x62), count: n)
            #expect(Self.check(ascii))
            for i in 0..<n {
                for bad: UInt8 in [0x00, 0x80, 0xC3, 0xFF] {
                    var b = ascii
                    b[i] = bad
                    #expect(!Self.check(b), "\(b)")
                }
            }
        }
        #expect(Self.check([]))
    }
}
