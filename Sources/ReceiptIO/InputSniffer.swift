/// Tells, from the first bytes of an input (after decompression), whether it is something receiptflow cannot
/// read: another compression or archive format, text in UTF-16 or UTF-32, or binary data. Such an input fails the
/// run with a message naming what was found, instead of becoming rows of `invalid_base64`.
public enum InputSniffer {
    /// How many leading bytes are checked.
    public static let window = 1024

    /// A description of what `head` (the first bytes of an input) holds when it cannot be read, else nil.
    /// A UTF-8 sequence cut by the end of `head` is accepted: the rest may follow.
    public static func problem(_ head: UnsafeRawBufferPointer) -> String? {
        let h = UnsafeRawBufferPointer(rebasing: head[0..<min(head.count, window)])
        if let format = knownFormat(h) { return format }
        var i = 0
        while i < h.count {
            let c = h[i]
            if c == 0 { return "binary data (a NUL byte at offset \(i))" }
            if c < 0x80 {
                i += 1
                continue
            }
            let length = sequenceLength(c)
            guard length > 0 else { return "binary data (a byte that is not UTF-8 text at offset \(i))" }
            var k = 1
            while k < length && i + k < h.count {
                guard h[i + k] & 0xC0 == 0x80 else {
                    return "binary data (a byte that is not UTF-8 text at offset \(i + k))"
                }
                k += 1
            }
            i += length
        }
        return nil
    }

    /// The encoding of `head` (the first bytes of an input) when it is UTF-16 or UTF-32 text, by the name `iconv`
    /// takes: `UTF-16` or `UTF-32` after a byte-order mark (which says the byte order), `UTF-16LE` or `UTF-16BE`
    /// without one (text mostly in the ASCII range has a zero in every other byte). Nil for anything else: UTF-8
    /// text has no zero bytes and cannot begin with `FF FE` or `FE FF`.
    public static func wideTextEncoding(_ head: UnsafeRawBufferPointer) -> String? {
        let h = UnsafeRawBufferPointer(rebasing: head[0..<min(head.count, window)])
        func starts(_ magic: [UInt8]) -> Bool { h.count >= magic.count && zip(h, magic).allSatisfy { $0 == $1 } }
        if starts([0xFF, 0xFE, 0x00, 0x00]) || starts([0x00, 0x00, 0xFE, 0xFF]) { return "UTF-32" }
        if starts([0xFF, 0xFE]) || starts([0xFE, 0xFF]) { return "UTF-16" }
        // Without a mark: at least four characters, nine in ten of them a non-zero byte beside a zero one.
        let pairs = h.count / 2
        guard pairs >= 4 else { return nil }
        var little = 0
        var big = 0
        for k in 0..<pairs {
            let a = h[2 * k]  // 2k + 1 < h.count: in range
            let b = h[2 * k + 1]
            if a != 0 && b == 0 { little += 1 }
            if a == 0 && b != 0 { big += 1 }
        }
        if little * 10 >= pairs * 9 { return "UTF-16LE" }
        if big * 10 >= pairs * 9 { return "UTF-16BE" }
        return nil
    }

    /// Formats recognised by their magic numbers.
    private static func knownFormat(_ h: UnsafeRawBufferPointer) -> String? {
        func starts(_ magic: [UInt8]) -> Bool { h.count >= magic.count && zip(h, magic).allSatisfy { $0 == $1 } }
        if starts([0x42, 0x5A, 0x68]) { return "bzip2-compressed data" }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return "xz-compressed data" }
        if starts([0x04, 0x22, 0x4D, 0x18]) { return "lz4-compressed data" }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return "a zip archive" }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "a 7z archive" }
        if starts([0x1F, 0x8B]) { return "gzip data inside compressed data (compressed twice)" }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return "zstd data inside compressed data (compressed twice)" }
        if starts([0x30, 0x82]) || starts([0x30, 0x80]) {
            return "binary DER (a raw receipt file?): give receipts as base64 text, one per line, or NDJSON"
        }
        return nil
    }

    /// The length of the UTF-8 sequence led by `c` (>= 0x80), or 0 when `c` cannot lead one.
    private static func sequenceLength(_ c: UInt8) -> Int {
        switch c {
        case 0xC2...0xDF: return 2
        case 0xE0...0xEF: return 3
        case 0xF0...0xF4: return 4
        default: return 0
        }
    }
}
