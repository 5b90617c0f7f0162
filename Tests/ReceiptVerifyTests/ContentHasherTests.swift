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

    // MARK: - Two buffers at once

    @Test func usesTwoLanesExactlyWhenLinuxReportsTheSHAExtensions() throws {
        // The kernel's own CPUID reading, cross-checked against the kernel's view of the CPU.
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }.map { $0.split(separator: " ") }
        let hasSHA = flags?.contains("sha_ni") ?? false
        let hasSSE41 = flags?.contains("sse4_1") ?? false
        #expect(ContentHasher().twoLane == (hasSHA && hasSSE41))
        #expect(ContentHasher(twoLane: false).twoLane == false)
    }

    @Test func hashesTheFIPSExamplesTwoAtATime() {
        // FIPS 180-2, appendix B: "abc" (one block), the 448-bit message (two blocks: the padding spills over),
        // and a million "a"s.
        let abc = Array("abc".utf8)
        let two = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        let want = [
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
        ]
        let messages = [abc, two, million]
        for hasher in [ContentHasher(), ContentHasher(twoLane: false)] {
            for i in messages.indices {
                for j in messages.indices {
                    let (a, b) = messages[i].withUnsafeBytes { x in
                        messages[j].withUnsafeBytes { y in hasher.sha256Pair(x, y) }
                    }
                    #expect(a.hex == want[i] && b.hex == want[j], "messages \(i), \(j)")
                }
            }
        }
    }

    @Test func pairsEqualOpenSSLForEveryLengthUpTo300InBothLaneOrders() {
        let hasher = ContentHasher()
        forEveryLanePair(seed: 0x5eed_2a11) { a, b, na, nb in
            let ab = hasher.sha256Pair(a, b)
            let ba = hasher.sha256Pair(b, a)
            let ea = hasher.sha256(a)
            let eb = hasher.sha256(b)
            #expect(ab.0 == ea && ab.1 == eb, "lengths \(na), \(nb)")
            #expect(ba.0 == eb && ba.1 == ea, "lengths \(nb), \(na)")
        }
    }

    @Test func pairsEqualOpenSSLOnRandomLargeBuffers() {
        var rng = SplitMix(seed: 0xb16_b0ff)
        let hasher = ContentHasher()
        for _ in 0..<40 {
            let na = rng.int(200_000)
            let nb = rng.chance(0.25) ? na : rng.int(200_000)
            let a = rng.bytes(na)
            let b = rng.bytes(nb)
            let (da, db) = a.withUnsafeBytes { x in b.withUnsafeBytes { y in hasher.sha256Pair(x, y) } }
            let (ea, eb) = a.withUnsafeBytes { x in b.withUnsafeBytes { y in (hasher.sha256(x), hasher.sha256(y)) } }
            #expect(da == ea && db == eb, "lengths \(na), \(nb)")
        }
    }

    @Test func hexPairWritesEachDigestIntoItsOwnBuffer() {
        let hasher = ContentHasher()
        var outA = [UInt8](repeating: 0x2A, count: 70)
        var outB = [UInt8](repeating: 0x2A, count: 64)
        let abc = Array("abc".utf8)
        abc.withUnsafeBytes { x in
            outA.withUnsafeMutableBytes { oa in
                outB.withUnsafeMutableBytes { ob in
                    hasher.sha256HexPair(x, into: oa, UnsafeRawBufferPointer(start: nil, count: 0), into: ob)
                }
            }
        }
        #expect(
            String(decoding: outA[0..<64], as: UTF8.self)
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(outA[64...].allSatisfy { $0 == 0x2A })
        #expect(
            String(decoding: outB, as: UTF8.self) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test
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

extension SplitMix {
    mutating func bytes(_ n: Int) -> [UInt8] {
        (0..<n).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
