/// A device identifier as Apple's receipt hash uses it: the 16 raw bytes of an iOS `identifierForVendor` UUID or
/// the 6 raw bytes of a Mac's primary MAC address. A value type of fixed size: reading one does not allocate.
public struct DeviceIdentifier: Sendable, Equatable {
    private var storage: (UInt64, UInt64) = (0, 0)
    /// 16 or 6.
    public private(set) var count = 0

    /// Reads the text forms: a UUID (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`), a MAC address (`00:1b:63:84:45:e6`,
    /// or with `-`), or plain hex of either length (32 or 12 digits); hex digits of either case. Nil for anything
    /// else.
    public init?(text: UnsafeRawBufferPointer) {
        let n = text.count
        guard n == 36 || n == 17 || n == 32 || n == 12 else { return nil }
        // Separators: a UUID's `-` at 8, 13, 18 and 23; a MAC address's `:` (or `-`, the same throughout) at every
        // third position.
        @inline(__always) func isSeparatorPosition(_ i: Int) -> Bool {
            n == 36 ? (i == 8 || i == 13 || i == 18 || i == 23) : n == 17 ? i % 3 == 2 : false
        }
        let separators: (UInt8, UInt8) =
            n == 36 ? (UInt8(ascii: "-"), UInt8(ascii: "-")) : (UInt8(ascii: ":"), UInt8(ascii: "-"))
        let bytes = n == 36 || n == 32 ? 16 : 6
        var k = 0
        var i = 0
        var macSeparator: UInt8? = nil
        var ok = true
        withUnsafeMutableBytes(of: &storage) { out in
            while i < n {
                if isSeparatorPosition(i) {
                    let s = text[i]
                    guard s == separators.0 || s == separators.1, macSeparator == nil || macSeparator == s else {
                        ok = false
                        return
                    }
                    if n == 17 { macSeparator = s }
                    i += 1
                    continue
                }
                guard i + 1 < n, let hi = Self.nibble(text[i]), let lo = Self.nibble(text[i + 1]), k < bytes else {
                    ok = false
                    return
                }
                out[k] = hi << 4 | lo
                k += 1
                i += 2
            }
        }
        guard ok, k == bytes else { return nil }
        count = bytes
    }

    public static func == (a: DeviceIdentifier, b: DeviceIdentifier) -> Bool {
        a.count == b.count && a.storage == b.storage
    }

    /// The raw bytes, for the duration of `body`.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        var s = storage
        return withUnsafeBytes(of: &s) { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    @inline(__always) static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// What a record says about its device (`--device-id-field`).
public enum RecordDevice: Sendable, Equatable {
    /// No option, no key, or a JSON null.
    case absent
    /// A value present but in none of the accepted forms.
    case malformed
    case identifier(DeviceIdentifier)
}
