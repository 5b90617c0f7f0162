import COpenSSL
import Testing

@testable import ReceiptVerify

/// The DER form of a raw ES256 signature: the same bytes OpenSSL writes for the same two integers.
@Suite struct ECDSASignatureDERTests {
    /// OpenSSL's DER for the integers `r` and `s` (unsigned big-endian).
    static func openSSLDER(_ r: [UInt8], _ s: [UInt8]) throws -> [UInt8] {
        let sig = try #require(ECDSA_SIG_new())
        defer { ECDSA_SIG_free(sig) }
        let br = try #require(BN_bin2bn(r, Int32(r.count), nil))
        let bs = try #require(BN_bin2bn(s, Int32(s.count), nil))
        #expect(ECDSA_SIG_set0(sig, br, bs) == 1)
        let n = i2d_ECDSA_SIG(sig, nil)
        var out = [UInt8](repeating: 0, count: Int(n))
        out.withUnsafeMutableBufferPointer { buf in
            var p = buf.baseAddress
            _ = i2d_ECDSA_SIG(sig, &p)
        }
        return out
    }

    static let shapes: [(r: [UInt8], s: [UInt8])] = {
        var rng = SystemRandomNumberGenerator()
        func random() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        var high = random()
        high[0] = 0xF0
        var low = random()
        low[0] = 0x01
        var leadingZeros = random()
        leadingZeros[0] = 0
        leadingZeros[1] = 0
        leadingZeros[2] = 0x80
        let zero = [UInt8](repeating: 0, count: 32)
        var one = zero
        one[31] = 1
        return [(high, low), (low, high), (leadingZeros, high), (zero, one), (one, zero), (random(), random())]
    }()

    @Test(arguments: 0..<shapes.count)
    func aRawSignatureBecomesTheDEROpenSSLWrites(index: Int) throws {
        let (r, s) = Self.shapes[index]
        #expect(ECDSASignatureDER.encode(rawP256: r + s) == (try Self.openSSLDER(r, s)))
    }

    @Test func onlySixtyFourBytesAreASignature() {
        #expect(ECDSASignatureDER.encode(rawP256: [UInt8](repeating: 1, count: 63)) == nil)
        #expect(ECDSASignatureDER.encode(rawP256: [UInt8](repeating: 1, count: 65)) == nil)
        #expect(ECDSASignatureDER.encode(rawP256: []) == nil)
    }
}
