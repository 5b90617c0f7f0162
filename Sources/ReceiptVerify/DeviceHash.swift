/// Apple's device check: the receipt's SHA-1 hash (attribute 5) is that of the device identifier, the opaque value
/// (attribute 4) and the bundle id's DER bytes (attribute 2's whole value), in that order, computed by OpenSSL.
public enum DeviceHash {
    /// True when SHA-1(`device` || `opaque` || `bundleDER`) equals `expected` (which must be 20 bytes to match).
    /// `hasher` is the caller's (one per thread); a new one is made when none is given.
    public static func matches(
        device: UnsafeRawBufferPointer, opaque: UnsafeRawBufferPointer, bundleDER: UnsafeRawBufferPointer,
        expected: UnsafeRawBufferPointer, hasher: ContentHasher? = nil
    ) -> Bool {
        guard expected.count == 20 else { return false }
        let hasher = hasher ?? ContentHasher()
        var digest = SHA256Digest()
        let done = digest.withUnsafeMutableBytes { out in
            hasher.digest(Digests.sha1, device, opaque, bundleDER, into: out)
        }
        return done && digest.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[0..<20]).elementsEqual(expected) }
    }
}
