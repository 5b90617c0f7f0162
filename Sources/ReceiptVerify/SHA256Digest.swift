/// A SHA-256 value held inline (no heap storage), with lowercase hex rendering.
public struct SHA256Digest: Sendable, Hashable {
    /// The 32 digest bytes as four words in memory order.
    public var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    public init() {}

    public static func == (a: SHA256Digest, b: SHA256Digest) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    public func hash(into h: inout Hasher) {
        h.combine(words.0)
        h.combine(words.1)
        h.combine(words.2)
        h.combine(words.3)
    }

    /// The digest bytes, in order.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = words
        return try Swift.withUnsafeBytes(of: &copy) { try body($0) }
    }

    mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeMutableBytes(of: &words) { try body($0) }
    }

    /// Writes the 64 lowercase hex characters into `out`, which must hold at least 64 bytes.
    public func writeHex(into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= 64, "a SHA-256 hex rendering needs 64 bytes")
        withUnsafeBytes { bytes in
            Hex.write(bytes, into: out)
        }
    }

    /// Calls `body` with the 64 lowercase hex characters, rendered on the stack.
    public func withHex<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var text: (SHA256Digest, SHA256Digest) = (.init(), .init())
        return try Swift.withUnsafeMutableBytes(of: &text) { out in
            writeHex(into: out)
            return try body(UnsafeRawBufferPointer(out))
        }
    }

    /// The lowercase hex rendering (allocates a String; for tests, messages and the miss path).
    public var hex: String {
        withUnsafeBytes { Hex.string($0) }
    }
}

/// Lowercase hexadecimal rendering without Foundation.
enum Hex {
    private static let digits: StaticString = "0123456789abcdef"

    /// Writes `2 * bytes.count` characters to `out` (the caller checked the size).
    static func write(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= bytes.count * 2)
        digits.withUTF8Buffer { table in
            for i in 0..<bytes.count {
                let b = bytes[i]
                // Both indices are < 16, inside the 16-byte table; 2*i+1 < out.count was checked above.
                out[2 * i] = table[Int(b >> 4)]
                out[2 * i + 1] = table[Int(b & 0x0F)]
            }
        }
    }

    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buf in
            write(bytes, into: UnsafeMutableRawBufferPointer(buf))
            return bytes.count * 2
        }
    }
}
