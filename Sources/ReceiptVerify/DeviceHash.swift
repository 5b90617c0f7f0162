import COpenSSL

/// Apple's device check: the receipt's SHA-1 hash (attribute 5) is that of the device identifier, the opaque value
/// (attribute 4) and the bundle id's DER bytes (attribute 2's whole value), in that order. OpenSSL's SHA-1, with
/// its context on the stack: nothing is allocated.
public enum DeviceHash {
    /// True when SHA-1(`device` || `opaque` || `bundleDER`) equals `expected` (which must be 20 bytes to match).
    public static func matches(
        device: UnsafeRawBufferPointer, opaque: UnsafeRawBufferPointer, bundleDER: UnsafeRawBufferPointer,
        expected: UnsafeRawBufferPointer
    ) -> Bool {
        guard expected.count == 20 else { return false }
        var digest: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &digest) { out in
            // Each part is a live buffer (or empty); `out` holds 24 >= 20 bytes.
            rf_sha1_parts3(
                device.baseAddress, device.count, opaque.baseAddress, opaque.count, bundleDER.baseAddress,
                bundleDER.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            return UnsafeRawBufferPointer(rebasing: out[0..<20]).elementsEqual(expected)
        }
    }
}
