import ReceiptDER
import ReceiptSynth
import Testing

@testable import ReceiptVerify

/// The signed-content digests, two receipts at a time: the two-lane SHA-1 and SHA-256 kernels against OpenSSL one
/// message at a time (`contentDigest`), and the OpenSSL fallback (`twoLane: false`).
struct ContentDigestTests {
    /// Both hashers: the two-lane kernels where the CPU has the SHA extensions, and OpenSSL for every pair.
    static var hashers: [ContentHasher] { [ContentHasher(), ContentHasher(twoLane: false)] }

    /// The pair's digests of `a` and `b` with one algorithm for both, as hex.
    static func pairHex(_ hasher: ContentHasher, _ a: [UInt8], _ b: [UInt8], _ alg: DigestAlgorithm) -> (
        String?, String?
    ) {
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                let (da, db) = hasher.contentDigests(x, alg, y, alg)
                return (da?.hex, db?.hex)
            }
        }
    }

    @Test func sha1OfTheFIPSExamplesInBothLanes() {
        // FIPS 180-2 appendix A: "abc" (one block), the 448-bit message (the padding spills into a second block),
        // and a million "a"s; plus the empty message.
        let messages: [[UInt8]] = [
            Array("abc".utf8), Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
            [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000), [],
        ]
        let want = [
            "a9993e364706816aba3e25717850c26c9cd0d89d", "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f", "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        ]
        for hasher in Self.hashers {
            for i in messages.indices {
                for j in messages.indices {
                    let (a, b) = Self.pairHex(hasher, messages[i], messages[j], .sha1)
                    #expect(a == want[i] && b == want[j], "messages \(i), \(j), two lanes: \(hasher.twoLane)")
                }
            }
        }
    }

    @Test func sha256OfTheFIPSExamplesInBothLanes() {
        // FIPS 180-2 appendix B: "abc" and the 448-bit message.
        let messages: [[UInt8]] = [
            Array("abc".utf8), Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
        ]
        let want = [
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        ]
        for hasher in Self.hashers {
            for i in messages.indices {
                for j in messages.indices {
                    let (a, b) = Self.pairHex(hasher, messages[i], messages[j], .sha256)
                    #expect(a == want[i] && b == want[j], "messages \(i), \(j), two lanes: \(hasher.twoLane)")
                }
            }
        }
    }

    @Test(arguments: [DigestAlgorithm.sha1, .sha256])
    func pairsEqualOpenSSLForEveryLengthUpTo300InBothLaneOrders(_ alg: DigestAlgorithm) {
        let hasher = ContentHasher()
        forEveryLanePair(seed: alg == .sha1 ? 0x5ea1_0001 : 0x5ea1_0256) { a, b, na, nb in
            let ab = hasher.contentDigests(a, alg, b, alg)
            let ba = hasher.contentDigests(b, alg, a, alg)
            let ea = hasher.contentDigest(a, alg)?.hex
            let eb = hasher.contentDigest(b, alg)?.hex
            #expect(ab.0?.hex == ea && ab.1?.hex == eb, "lengths \(na), \(nb)")
            #expect(ba.0?.hex == eb && ba.1?.hex == ea, "lengths \(nb), \(na)")
            #expect(ab.0?.size == (alg == .sha1 ? 20 : 32))
        }
    }

    @Test(arguments: [DigestAlgorithm.sha1, .sha256])
    func pairsEqualOpenSSLOnRandomLargeBuffers(_ alg: DigestAlgorithm) {
        var rng = SplitMix(seed: alg == .sha1 ? 0xb16_0001 : 0xb16_0256)
        let hasher = ContentHasher()
        for _ in 0..<40 {
            let na = rng.int(200_000)
            let nb = rng.chance(0.25) ? na : rng.int(200_000)
            let a = rng.bytes(na)
            let b = rng.bytes(nb)
            let (da, db) = Self.pairHex(hasher, a, b, alg)
            let ea = a.withUnsafeBytes { hasher.contentDigest($0, alg)?.hex }
            let eb = b.withUnsafeBytes { hasher.contentDigest($0, alg)?.hex }
            #expect(da == ea && db == eb, "lengths \(na), \(nb)")
        }
    }

    @Test func mixedAndUnsupportedPairsGetOneDigestEach() {
        let abc = Array("abc".utf8)
        for hasher in Self.hashers {
            let (a, b) = abc.withUnsafeBytes { x in hasher.contentDigests(x, .sha1, x, .sha256) }
            #expect(a?.algorithm == .sha1 && a?.hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
            #expect(
                b?.algorithm == .sha256
                    && b?.hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
            let (c, d) = abc.withUnsafeBytes { x in hasher.contentDigests(x, .unsupported, x, .sha1) }
            #expect(c == nil && d?.hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
            let (e, f) = abc.withUnsafeBytes { x in hasher.contentDigests(x, .unsupported, x, .unsupported) }
            #expect(e == nil && f == nil)
        }
    }

    @Test func aDigestRemembersItsBufferAndAlgorithm() {
        let bytes = Array("abcdef".utf8)
        bytes.withUnsafeBytes { all in
            let whole = ContentHasher().contentDigest(all, .sha1)!
            #expect(whole.matches(all, .sha1))
            #expect(!whole.matches(all, .sha256))
            #expect(!whole.matches(UnsafeRawBufferPointer(rebasing: all[0..<5]), .sha1))
            #expect(!whole.matches(UnsafeRawBufferPointer(rebasing: all[1...]), .sha1))
        }
    }

    // MARK: - Receipts and contents together

    @Test func digestsOfReceiptsAndContentsEqualOpenSSLOneByOne() {
        // Every shape of request (a receipt's bytes or not, a content of each algorithm or none, a second receipt
        // or not), lengths from empty to 100 KB so that either lane's messages may end first, in both hashers.
        var rng = SplitMix(seed: 0x00d1_6e57)
        let algorithms: [DigestAlgorithm] = [.sha1, .sha256, .unsupported]
        for hasher in Self.hashers {
            for round in 0..<600 {
                func length() -> Int { rng.chance(0.2) ? rng.int(100_000) : rng.int(3000) }
                let buffers = (0..<4).map { _ in rng.bytes(length()) }
                let algA = algorithms[rng.int(3)]
                let algB = algorithms[rng.int(3)]
                let (withReceiptA, withContentA) = (rng.chance(0.8), rng.chance(0.8))
                let (withReceiptB, withContentB, second) = (rng.chance(0.8), rng.chance(0.8), rng.chance(0.8))
                buffers[0].withUnsafeBytes { ra in
                    buffers[1].withUnsafeBytes { ca in
                        buffers[2].withUnsafeBytes { rb in
                            buffers[3].withUnsafeBytes { cb in
                                let a = ReceiptDigestInput(
                                    receipt: withReceiptA ? ra : nil, content: withContentA ? ca : nil,
                                    algorithm: algA)
                                let b = ReceiptDigestInput(
                                    receipt: withReceiptB ? rb : nil, content: withContentB ? cb : nil,
                                    algorithm: algB)
                                let (receipts, contents) = hasher.digests(a, second ? b : nil)
                                let label = "round \(round), two lanes: \(hasher.twoLane)"
                                #expect(receipts.0 == (withReceiptA ? hasher.sha256(ra) : nil), "\(label)")
                                #expect(contents.0?.hex == (withContentA ? hasher.contentDigest(ca, algA)?.hex : nil))
                                #expect(contents.0.map { $0.matches(ca, algA) } ?? true)
                                if second {
                                    #expect(receipts.1 == (withReceiptB ? hasher.sha256(rb) : nil), "\(label)")
                                    #expect(
                                        contents.1?.hex == (withContentB ? hasher.contentDigest(cb, algB)?.hex : nil),
                                        "\(label)")
                                    #expect(contents.1.map { $0.matches(cb, algB) } ?? true)
                                } else {
                                    #expect(receipts.1 == nil && contents.1 == nil)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
