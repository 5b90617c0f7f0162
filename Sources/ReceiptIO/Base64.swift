import CSIMD
import ReceiptModel

/// Base64 decoding into caller-owned memory, with no allocation: the standard alphabet (RFC 4648 section 4) and
/// the URL-safe one (section 5, `-` and `_` for `+` and `/`), which some stores and JWT-minded code write.
///
/// Rules, chosen for line-wrapped and hand-made exports:
/// - ASCII whitespace (space, tab, CR, LF, form feed) anywhere is ignored;
/// - padding is optional, but when present it must complete the last quartet (`xx==`, `xxx=`) and only
///   whitespace may follow it;
/// - a final group of one character is invalid (it cannot encode a byte); unused low bits of a final group
///   are ignored rather than rejected, as most decoders (OpenSSL, Foundation) do;
/// - anything else (`%`, `.`, non-ASCII, `=` in the middle) is `invalid_base64`.
///
/// The AVX2 block kernel knows only the standard alphabet: a block holding `-` or `_` goes to the scalar path.
public enum Base64 {
    /// An upper bound of the decoded size of `count` input characters.
    @inlinable public static func maxDecodedCount(_ count: Int) -> Int { (count / 4) * 3 + 3 }

    /// Sextet values: 0...63, `pad`, `space`, or `bad`.
    static let pad: UInt8 = 0x40
    static let space: UInt8 = 0x41
    static let bad: UInt8 = 0xFF

    static let table: [UInt8] = {
        var t = [UInt8](repeating: bad, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for (v, c) in alphabet.enumerated() { t[Int(c)] = UInt8(v) }
        t[Int(UInt8(ascii: "-"))] = 62
        t[Int(UInt8(ascii: "_"))] = 63
        t[Int(UInt8(ascii: "="))] = pad
        for c in [0x20, 0x09, 0x0D, 0x0A, 0x0C] { t[c] = space }
        return t
    }()

    /// Four tables of 256 sextets pre-shifted to their place in a 24-bit group (18, 12, 6, 0 bits), so that a
    /// quartet decodes with four loads and three ORs; anything not in the alphabet (whitespace and `=`
    /// included) sets bits 24-31, which sends the group to the careful path.
    static let shifted: [UInt32] = {
        var t = [UInt32](repeating: 0xFF00_0000, count: 4 * 256)
        for c in 0..<256 where table[c] < 64 {
            for k in 0..<4 { t[k * 256 + c] = UInt32(table[c]) << (18 - 6 * k) }
        }
        return t
    }()

    /// Decodes `input` into `output` (at least `maxDecodedCount(input.count)` bytes) and returns the byte count.
    public static func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)
        throws(ReceiptError) -> Int
    {
        precondition(output.count >= maxDecodedCount(input.count))
        return try table.withUnsafeBufferPointer { (lut) throws(ReceiptError) -> Int in
            try shifted.withUnsafeBufferPointer { (wide) throws(ReceiptError) -> Int in
                try decode(input, output, lut, wide)
            }
        }
    }

    private static func decode(
        _ input: UnsafeRawBufferPointer, _ output: UnsafeMutableRawBufferPointer, _ lut: UnsafeBufferPointer<UInt8>,
        _ wide: UnsafeBufferPointer<UInt32>
    ) throws(ReceiptError) -> Int {
        guard let src = input.baseAddress, let dst = output.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            return 0
        }
        let n = input.count
        var i = 0
        var o = 0
        var acc: UInt32 = 0
        var have = 0  // sextets accumulated in `acc` (0...3)
        while i < n {
            // Fast path: a whole quartet of alphabet characters at a group boundary, written as 3 bytes.
            // In range: i + 4 <= n, and o + 3 <= maxDecodedCount(n) <= output.count since o/3 <= i/4.
            if have == 0 {
                // Whole 32-character blocks with AVX2 when the CPU has it (C shim). In range: it reads only
                // src[i..<n], leaves 12 characters, and so writes at most 3(n-i)/4 - 1 bytes from o (see the
                // bound below), inside output; it consumes a multiple of 32 characters, 3/4 as many bytes.
                let blocks = rf_base64_decode_blocks(
                    src.assumingMemoryBound(to: UInt8.self) + i, n - i, dst + o, 12)
                i += blocks
                o += blocks / 4 * 3
                // Eight characters to six bytes per step, written as one 8-byte store (the two extra bytes are
                // overwritten next). In range: i + 12 <= n, and o <= 3i/4, so o + 8 <= 3n/4 - 1 < output.count.
                while i + 12 <= n {
                    let w = src.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    // Every index is a byte value (< 256) plus a multiple of 256 below 1024: inside `wide`.
                    @inline(__always) func group(_ w: UInt64) -> UInt32 {
                        wide[Int(truncatingIfNeeded: w & 0xFF)] | wide[256 + Int(truncatingIfNeeded: (w >> 8) & 0xFF)]
                            | wide[512 + Int(truncatingIfNeeded: (w >> 16) & 0xFF)]
                            | wide[768 + Int(truncatingIfNeeded: (w >> 24) & 0xFF)]
                    }
                    let x = group(w)
                    let y = group(w >> 32)
                    guard (x | y) & 0xFF00_0000 == 0 else { break }
                    // x = 0x00AABBCC must land as AA BB CC in memory: byte-swap, then drop the low zero byte.
                    let bytes = UInt64(x.byteSwapped >> 8) | UInt64(y.byteSwapped >> 8) << 24
                    UnsafeMutableRawPointer(dst).storeBytes(of: bytes.littleEndian, toByteOffset: o, as: UInt64.self)
                    o += 6
                    i += 8
                }
                while i + 4 <= n {
                    let a = lut[Int(src.load(fromByteOffset: i, as: UInt8.self))]
                    let b = lut[Int(src.load(fromByteOffset: i + 1, as: UInt8.self))]
                    let c = lut[Int(src.load(fromByteOffset: i + 2, as: UInt8.self))]
                    let d = lut[Int(src.load(fromByteOffset: i + 3, as: UInt8.self))]
                    guard (a | b | c | d) < 64 else { break }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    dst[o] = UInt8(truncatingIfNeeded: v >> 16)
                    dst[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    dst[o + 2] = UInt8(truncatingIfNeeded: v)
                    o += 3
                    i += 4
                }
                if i >= n { break }
            }
            // Slow path, one character: whitespace, padding, a group split by whitespace, or an error.
            let s = lut[Int(src.load(fromByteOffset: i, as: UInt8.self))]
            if s < 64 {
                acc = acc << 6 | UInt32(s)
                have += 1
                if have == 4 {
                    dst[o] = UInt8(truncatingIfNeeded: acc >> 16)
                    dst[o + 1] = UInt8(truncatingIfNeeded: acc >> 8)
                    dst[o + 2] = UInt8(truncatingIfNeeded: acc)
                    o += 3
                    have = 0
                    acc = 0
                }
                i += 1
            } else if s == space {
                i += 1
            } else if s == pad {
                return try finish(src, n, i, dst, o, acc, have)
            } else {
                throw ReceiptError(.invalidBase64, at: i, "the receipt is not valid base64")
            }
        }
        return try tail(dst, o, acc, have, at: n)
    }

    /// Handles `=` at index `i`: it must complete the pending group, then only whitespace may follow.
    private static func finish(
        _ src: UnsafeRawPointer, _ n: Int, _ i: Int, _ dst: UnsafeMutablePointer<UInt8>, _ o: Int, _ acc: UInt32,
        _ have: Int
    ) throws(ReceiptError) -> Int {
        guard have >= 2 else { throw ReceiptError(.invalidBase64, at: i, "base64 padding in the wrong place") }
        var pads = 0
        var j = i
        while j < n {
            let c = src.load(fromByteOffset: j, as: UInt8.self)
            if c == UInt8(ascii: "=") {
                pads += 1
            } else if table[Int(c)] != space {
                throw ReceiptError(.invalidBase64, at: j, "base64 data after the padding")
            }
            j += 1
        }
        guard have + pads == 4 else { throw ReceiptError(.invalidBase64, at: i, "wrong amount of base64 padding") }
        return try tail(dst, o, acc, have, at: i)
    }

    /// Writes the bytes of a final partial group of `have` sextets.
    private static func tail(
        _ dst: UnsafeMutablePointer<UInt8>, _ o: Int, _ acc: UInt32, _ have: Int, at: Int
    ) throws(ReceiptError) -> Int {
        switch have {
        case 0:
            return o
        case 2:
            dst[o] = UInt8(truncatingIfNeeded: acc >> 4)
            return o + 1
        case 3:
            dst[o] = UInt8(truncatingIfNeeded: acc >> 10)
            dst[o + 1] = UInt8(truncatingIfNeeded: acc >> 2)
            return o + 2
        default:
            throw ReceiptError(.invalidBase64, at: at, "the base64 text ends with a lone character")
        }
    }
}
