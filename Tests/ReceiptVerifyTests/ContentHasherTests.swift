import Foundation
import ReceiptSynth
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

    @Test func computesSHA1AndSHA256OfTheSignerInfosAlgorithm() {
        // FIPS 180-2, appendices A.1 and B.1: SHA-1("abc") and SHA-256("abc").
        let hasher = ContentHasher()
        let sha1 = Array("abc".utf8).withUnsafeBytes { hasher.digest(.sha1, $0) }
        let sha256 = Array("abc".utf8).withUnsafeBytes { hasher.digest(.sha256, $0) }
        #expect(
            sha1?.withUnsafeBytes { Hex.string(UnsafeRawBufferPointer(rebasing: $0[0..<20])) }
                == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(sha256?.hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Array("abc".utf8).withUnsafeBytes { hasher.digest(.unsupported, $0) } == nil)
    }

    @Test func aMessageInPartsHasTheDigestOfItsConcatenation() {
        let hasher = ContentHasher()
        let whole = Array("abcdef".utf8).withUnsafeBytes { hasher.sha256($0) }
        var parts = SHA256Digest()
        let done = Array("ab".utf8).withUnsafeBytes { a in
            Array("cd".utf8).withUnsafeBytes { b in
                Array("ef".utf8).withUnsafeBytes { c in
                    parts.withUnsafeMutableBytes { hasher.digest(Digests.sha256, a, b, c, into: $0) }
                }
            }
        }
        #expect(done)
        #expect(parts == whole)
    }

    @Test func framedDigestsTellApartTheSameBytesSplitDifferently() {
        let hasher = ContentHasher()
        func framed(_ strings: [String]) -> SHA256Digest {
            hasher.sha256 { feed in
                for s in strings { Array(s.utf8).withUnsafeBytes { feed($0) } }
            }
        }
        #expect(framed(["ab", "c"]) != framed(["a", "bc"]))
        #expect(framed(["abc"]) != framed(["abc", ""]))
        #expect(framed(["ab", "c"]) == framed(["ab", "c"]))
    }
}
