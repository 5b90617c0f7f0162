#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Paths are bytes: a file name need not be UTF-8. A path given on the command line is carried as text (for
/// messages, the `source` column, `summary.json` and the manifest) and turned back into its exact bytes where a
/// file is opened.
///
/// A path that is valid UTF-8 is its own text. One that is not is written with each byte that is not part of
/// valid UTF-8 as `\xNN` (two upper-case hex digits) and each backslash as `\\`; that text is registered here
/// with the bytes it stands for, and `withFileSystemPath` gives the bytes back to the system call.
public enum RawPath {
    private static let lock = Lock()
    /// Escaped text to the path bytes it stands for.
    nonisolated(unsafe) private static var registered: [String: [UInt8]] = [:]

    /// The text of path `bytes`; a path that is not valid UTF-8 is registered so that it opens as itself.
    public static func text(_ bytes: [UInt8]) -> String {
        guard let escaped = escape(bytes) else { return String(decoding: bytes, as: UTF8.self) }
        lock.withLock { registered[escaped] = bytes }
        return escaped
    }

    /// The escaped text of `bytes`, or nil when they are valid UTF-8 (then the text is the bytes themselves).
    public static func escape(_ bytes: [UInt8]) -> String? {
        var out = ""
        var invalid = false
        var i = 0
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                out.unicodeScalars.append(scalar)
                if scalar == "\\" { out += "\\" }
                i += encoded.count
            case .error(let length):
                invalid = true
                for b in bytes[i..<(i + length)] {
                    out +=
                        "\\x" + String(b >> 4, radix: 16, uppercase: true) + String(b & 15, radix: 16, uppercase: true)
                }
                i += length
            case .emptyInput:
                return invalid ? out : nil
            }
        }
    }

    /// Whether `text` stands for a path that is not UTF-8.
    public static func isRaw(_ text: String) -> Bool { lock.withLock { registered[text] != nil } }

    /// The bytes of the path `text` stands for.
    public static func bytes(_ text: String) -> [UInt8] {
        lock.withLock { registered[text] } ?? Array(text.utf8)
    }

    /// Calls `body` with the path `text` stands for as a C string (its exact bytes).
    public static func withFileSystemPath<R>(_ text: String, _ body: (UnsafePointer<CChar>) throws -> R) rethrows
        -> R
    {
        var b = bytes(text)
        b.append(0)
        return try b.withUnsafeBufferPointer { p in
            try p.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}
