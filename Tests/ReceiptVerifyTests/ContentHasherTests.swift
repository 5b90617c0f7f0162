import Foundation
import ReceiptTestSupport
import Testing

@testable import ReceiptVerify

/// SHA-256 of whole buffers for the `receipt_sha256` column.
struct ContentHasherTests {
    @Test func hashesTheFIPSExampleMessage() {
        // FIPS 180-2, appendix B.1: SHA-256("abc").
        let digest = Array("abc".utf8).withUnsafeBytes { ContentHasher().sha256($0) }
        #expect(digest.hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hashesTheEmptyBuffer() {
        let digest = ContentHasher().sha256(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(digest.hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func rendersLowercaseHexIntoTheCallersBuffer() {
        let hasher = ContentHasher()
        var out = [UInt8](repeating: 0x2A, count: 70)
        Array("abc".utf8).withUnsafeBytes { input in
            out.withUnsafeMutableBytes { hasher.sha256Hex(input, into: $0) }
        }
        #expect(
            String(decoding: out[0..<64], as: UTF8.self)
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(out[64...].allSatisfy { $0 == 0x2A })  // nothing written past the 64 characters
    }

    @Test func oneHasherGivesIndependentResultsForSuccessiveBuffers() {
        let hasher = ContentHasher()
        let a = Array("abc".utf8).withUnsafeBytes { hasher.sha256($0) }
        let b = Array("abd".utf8).withUnsafeBytes { hasher.sha256($0) }
        let a2 = Array("abc".utf8).withUnsafeBytes { hasher.sha256($0) }
        #expect(a == a2)
        #expect(a != b)
    }

    @Test(.enabled(if: Fixtures.sharedAvailable, Comment(rawValue: "\(Fixtures.skipReason)")))
    func matchesTheFixtureDigestsInExpectedJSON() throws {
        let hasher = ContentHasher()
        let expected = try Fixtures.expected()
        #expect(expected.count == 18)
        for (name, value) in expected {
            let want = try #require((value as? [String: Any])?["sha256"] as? String)
            let bytes = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(name))
            #expect(bytes.withUnsafeBytes { hasher.sha256($0).hex } == want, "\(name)")
        }
    }
}
