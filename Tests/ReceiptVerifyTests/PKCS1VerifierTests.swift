import COpenSSL
import ReceiptDER
import ReceiptModel
import Testing

@testable import ReceiptSynth
@testable import ReceiptVerify

/// The verifier's RSA PKCS #1 v1.5 check (`PKCS1Verifier`, OpenSSL's `EVP_PKEY_verify` with kept contexts): every
/// signature that is not exactly the valid encoding is rejected as bad_signature, in agreement with a fresh
/// `EVP_PKEY_verify`.
struct PKCS1VerifierTests {
    static let key = RSATestKey.leaf

    /// A receipt (dated 2020, genuine chain) whose signature is made by `sign` from the digest it must cover.
    static func receipt(
        _ algorithm: ReceiptSigner.Digest = .sha256, marker: String = "rsa",
        _ sign: @escaping @Sendable (_ digest: [UInt8], _ key: PrivateKey) -> [UInt8]
    ) throws -> ParsedReceipt {
        try TestCA.receipt(marker: marker) {
            $0.digest = algorithm
            $0.signature = sign
        }
    }

    static func algorithm(_ d: ReceiptSigner.Digest) -> DigestAlgorithm { d == .sha1 ? .sha1 : .sha256 }

    /// Verifies `receipt` with a fresh verifier and expects bad_signature; also asks OpenSSL about the same
    /// signature, which must reject it too.
    func expectBadSignature(
        _ receipt: ParsedReceipt, _ digest: ReceiptSigner.Digest, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let outcome = receipt.verify(with: try TestCA.verifier())
        #expect(outcome.error == .badSignature, "detail: \(outcome.detail ?? "")", sourceLocation: sourceLocation)
        #expect(
            outcome.entry?.publicKey != nil, "no key: the signature was not checked", sourceLocation: sourceLocation)
        let signature = Array(receipt.der[receipt.container.signature])
        let contentDigest = digest.hash(receipt.content)
        #expect(
            !Self.key.opensslAccepts(signature, digest: contentDigest, Self.algorithm(digest)),
            "OpenSSL accepts what the verifier rejects", sourceLocation: sourceLocation)
    }

    // MARK: - The valid encoding, built by the test

    @Test(arguments: [ReceiptSigner.Digest.sha1, .sha256])
    func blockBuiltByTheTestIsWhatOpenSSLSigns(digest: ReceiptSigner.Digest) throws {
        // Positive control for the crafted blocks below: the test's own valid block, raised to d, is exactly
        // OpenSSL's PKCS #1 v1.5 signature, and a receipt carrying it verifies.
        let d = digest.hash(Array("positive control".utf8))
        let k = Self.key.k
        let raw = try #require(Self.key.sign(block: PKCS1Block.valid(d, Self.algorithm(digest), k: k)))
        #expect(raw == Self.key.key.sign(digest: d, md: digest.md))
        let receipt = try Self.receipt(digest) { d, key in
            key.rawPrivateOperation(PKCS1Block.valid(d, digest == .sha1 ? .sha1 : .sha256, k: k))!
        }
        let outcome = receipt.verify(with: try TestCA.verifier())
        #expect(outcome.verified, "\(outcome.detail ?? "")")
    }

    // MARK: - Crafted blocks: each is one way a parsing verifier goes wrong

    /// A block for the digest `d` (of `alg`) in a modulus of k bytes that is wrong in one way.
    struct Craft: CustomTestStringConvertible, Sendable {
        let name: String
        let make: @Sendable (_ d: [UInt8], _ alg: DigestAlgorithm, _ k: Int) -> [UInt8]
        var testDescription: String { name }
    }

    static let crafts: [Craft] = [
        Craft(name: "block type 2 instead of 1") { d, alg, k in
            var b = PKCS1Block.valid(d, alg, k: k)
            b[1] = 0x02
            return b
        },
        Craft(name: "one padding byte FE") { d, alg, k in
            var b = PKCS1Block.valid(d, alg, k: k)
            b[40] = 0xFE
            return b
        },
        Craft(name: "no zero separator (FF instead)") { d, alg, k in
            let t = PKCS1Block.digestInfo(PKCS1Block.oid(alg), d)
            var b = PKCS1Block.pad(t, k: k)
            b[k - t.count - 1] = 0xFF
            return b
        },
        Craft(name: "only 7 padding bytes, the digest then garbage") { d, alg, k in
            let t = PKCS1Block.digestInfo(PKCS1Block.oid(alg), d)
            let head = [0x00, 0x01] + [UInt8](repeating: 0xFF, count: 7) + [0x00] + t
            return head + [UInt8](repeating: 0x5A, count: k - head.count)
        },
        Craft(name: "trailing garbage after the digest") { d, alg, k in
            PKCS1Block.pad(PKCS1Block.digestInfo(PKCS1Block.oid(alg), d) + [1, 2, 3, 4, 5, 6, 7, 8], k: k)
        },
        Craft(name: "DigestInfo without the NULL parameters") { d, alg, k in
            PKCS1Block.pad(PKCS1Block.digestInfo(PKCS1Block.oid(alg), d, nullParameters: false), k: k)
        },
        Craft(name: "garbage hidden in the algorithm parameters") { d, alg, k in
            let algID = DER.sequence([
                DER.oid(PKCS1Block.oid(alg)), DER.octetString([UInt8](repeating: 0xA5, count: 9)),
            ])
            return PKCS1Block.pad(DER.sequence([algID, DER.octetString(d)]), k: k)
        },
        Craft(name: "DigestInfo length in long form") { d, alg, k in
            let t = PKCS1Block.digestInfo(PKCS1Block.oid(alg), d)
            // 30 LL ... -> 30 81 LL ...: the same value in BER, not DER.
            return PKCS1Block.pad([0x30, 0x81] + t.dropFirst(), k: k)
        },
        Craft(name: "DigestInfo names the other digest algorithm") { d, alg, k in
            PKCS1Block.pad(PKCS1Block.digestInfo(PKCS1Block.oid(alg == .sha1 ? .sha256 : .sha1), d), k: k)
        },
        Craft(name: "DigestInfo names MD5") { d, _, k in
            PKCS1Block.pad(PKCS1Block.digestInfo("1.2.840.113549.2.5", d), k: k)
        },
        Craft(name: "digest of other content") { _, alg, k in
            let other = Array("some other content".utf8)
            return PKCS1Block.valid(alg == .sha1 ? Crypto.sha1(other) : Crypto.sha256(other), alg, k: k)
        },
        Craft(name: "digest truncated by one byte") { d, alg, k in
            PKCS1Block.pad(PKCS1Block.digestInfo(PKCS1Block.oid(alg), Array(d.dropLast())), k: k)
        },
    ]

    @Test(arguments: crafts, [ReceiptSigner.Digest.sha1, .sha256])
    func craftedBlockIsABadSignature(craft: Craft, digest: ReceiptSigner.Digest) throws {
        let k = Self.key.k
        let alg = Self.algorithm(digest)
        let receipt = try Self.receipt(digest) { d, key in key.rawPrivateOperation(craft.make(d, alg, k))! }
        try expectBadSignature(receipt, digest)
    }

    // MARK: - Signature values and lengths

    @Test func signatureEqualToTheModulusIsRejected() throws {
        let n = Self.key.modulus
        try expectBadSignature(try Self.receipt { _, _ in n }, .sha256)
    }

    @Test func signatureOfAllOnesIsRejected() throws {
        let k = Self.key.k
        try expectBadSignature(try Self.receipt { _, _ in [UInt8](repeating: 0xFF, count: k) }, .sha256)
    }

    @Test func validSignaturePlusTheModulusIsRejected() throws {
        // s + n is s modulo n, so a verifier that reduces its input (BN_mod_exp_mont does) instead of rejecting
        // s >= n would accept it. Find a receipt whose signature leaves room for s + n in k bytes.
        let n = Self.key.modulus
        var found: (marker: String, sum: [UInt8])? = nil
        for i in 0..<64 {
            let marker = "plus-n-\(i)"
            let genuine = try TestCA.receipt(marker: marker)
            if let sum = Self.add(Array(genuine.der[genuine.container.signature]), n) {
                #expect(genuine.verify(with: try TestCA.verifier()).verified)
                found = (marker, sum)
                break
            }
        }
        let (marker, sum) = try #require(found, "no signature below 2^(8k) - n among 64 receipts")
        try expectBadSignature(try Self.receipt(marker: marker) { _, _ in sum }, .sha256)
    }

    /// a + b as k-byte big-endian numbers; nil on overflow.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8]? {
        precondition(a.count == b.count)
        var out = a
        var carry = 0
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            let s = Int(a[i]) + Int(b[i]) + carry
            out[i] = UInt8(s & 0xFF)
            carry = s >> 8
        }
        return carry == 0 ? out : nil
    }

    @Test func signatureWithALeadingZeroDroppedIsRejected() throws {
        // The same number in k - 1 bytes: a verifier that accepts any length up to k would take it. About one
        // signature in 256 starts with 00; the search over digests is deterministic.
        let k = Self.key.k
        var found: [UInt8]? = nil
        for i in 0..<4096 {
            let genuine = try TestCA.receipt(marker: "short-\(i)")
            let signature = Array(genuine.der[genuine.container.signature])
            if signature[0] == 0 {
                #expect(genuine.verify(with: try TestCA.verifier()).verified)
                found = Array(signature.dropFirst())
                let receipt = try Self.receipt(marker: "short-\(i)") { _, _ in Array(signature.dropFirst()) }
                try expectBadSignature(receipt, .sha256)
                break
            }
        }
        #expect(found?.count == k - 1)
    }

    @Test func signatureWithALeadingZeroAddedIsRejected() throws {
        let receipt = try Self.receipt { d, key in [0x00] + key.sign(digest: d, md: Crypto.sha256MD) }
        try expectBadSignature(receipt, .sha256)
    }

    @Test func signatureWithATrailingByteIsRejected() throws {
        let receipt = try Self.receipt { d, key in key.sign(digest: d, md: Crypto.sha256MD) + [0x00] }
        try expectBadSignature(receipt, .sha256)
    }

    @Test func emptySignatureIsRejected() throws {
        try expectBadSignature(try Self.receipt { _, _ in [] }, .sha256)
    }

    // MARK: - Agreement with OpenSSL

    /// One verifier for all cases, so its kept contexts serve both digest algorithms in turn.
    @Test func agreesWithOpenSSLOverRandomTamperings() throws {
        let key = Self.key
        let k = key.k
        let n = key.modulus
        let verifier = PKCS1Verifier()
        var rng = SplitMix(seed: 0x5EED_4B1D)
        var accepted = 0
        var rejected = 0
        var disagreements: [String] = []
        for i in 0..<400 {
            let alg: DigestAlgorithm = rng.chance(0.5) ? .sha1 : .sha256
            let digest = alg == .sha1 ? Crypto.sha1(rng.bytes(24)) : Crypto.sha256(rng.bytes(24))
            var block = PKCS1Block.valid(digest, alg, k: k)
            let kind = rng.int(9)
            switch kind {
            case 0: break  // untouched: both must accept
            case 1: block[rng.int(k)] ^= UInt8(1) << UInt8(rng.int(8))  // one bit of the block
            case 2: block[rng.int(k)] = UInt8(truncatingIfNeeded: rng.next())  // one byte of the block
            case 3: block[2 + rng.int(k - 2 - 52)] = UInt8(truncatingIfNeeded: rng.next())  // inside the padding
            case 4: block[k - 1 - rng.int(digest.count + 19)] ^= 0x01  // inside DigestInfo or the digest
            default: break  // the signature is tampered below
            }
            guard var signature = key.sign(block: block) else { continue }  // the block grew past n
            switch kind {
            case 5: signature[rng.int(k)] ^= UInt8(1) << UInt8(rng.int(8))
            case 6: signature = rng.chance(0.5) ? Array(signature.dropFirst()) : [0] + signature
            case 7: signature = rng.bytes(k)
            case 8: signature = Self.add(signature, n) ?? n
            default: break
            }
            let ours = key.pkcs1Accepts(signature, digest: digest, alg, with: verifier)
            let theirs = key.opensslAccepts(signature, digest: digest, alg)
            if ours != theirs { disagreements.append("case \(i) kind \(kind): ours \(ours), OpenSSL \(theirs)") }
            if ours { accepted += 1 } else { rejected += 1 }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
        // Not vacuous: both outcomes occurred many times.
        #expect(accepted >= 25)
        #expect(rejected >= 250)
    }

    /// The error queue is cleared only after a failed call; a rejected signature (whose reasons OpenSSL queues)
    /// and an accepted one both leave the thread's queue empty.
    @Test func leavesNoOpenSSLErrorOnTheThreadAfterAVerdict() throws {
        let key = Self.key
        let verifier = PKCS1Verifier()
        let digest = Crypto.sha256(Array("error queue".utf8))
        let valid = try #require(key.sign(block: PKCS1Block.valid(digest, .sha256, k: key.k)))
        var tampered = valid
        tampered[tampered.count / 2] ^= 0x01
        ERR_clear_error()
        for (signature, expected) in [(tampered, false), (valid, true), (tampered, false)] {
            #expect(key.pkcs1Accepts(signature, digest: digest, .sha256, with: verifier) == expected)
            #expect(ERR_peek_error() == 0, "an OpenSSL error was left queued after a verdict of \(expected)")
        }
    }

    @Test func oneVerifierServesKeysOfDifferentSizes() throws {
        // The verifier keeps a context for the last key: switching keys must replace it, each verdict right.
        let small = try Self.customKey(bits: 1024)
        let big = Self.key
        #expect(small.k == 128)
        #expect(big.k == 256)
        let verifier = PKCS1Verifier()
        for round in 0..<6 {
            for key in [small, big, small] {
                let d = Crypto.sha256(Array("round \(round)".utf8))
                let good = try #require(key.sign(block: PKCS1Block.valid(d, .sha256, k: key.k)))
                var bad = good
                bad[key.k / 2] ^= 0x08
                #expect(key.pkcs1Accepts(good, digest: d, .sha256, with: verifier))
                #expect(!key.pkcs1Accepts(bad, digest: d, .sha256, with: verifier))
                // The other key's signature has the wrong length or value for this key.
                let other = key === big ? small : big
                let foreign = try #require(other.sign(block: PKCS1Block.valid(d, .sha256, k: other.k)))
                #expect(!key.pkcs1Accepts(foreign, digest: d, .sha256, with: verifier))
            }
        }
    }

    // MARK: - Other key sizes

    /// A leaf under the genuine intermediate with a fresh deterministic key of `bits` bits.
    static func customIdentity(bits: Int) throws -> SigningIdentity {
        let key = try PrivateKey(seed: "pkcs1-test-\(bits)", bits: bits)
        return try TestCA.pki.customLeaf(
            notBefore: TestPKI.leafNotBefore, notAfter: TestPKI.leafNotAfter, serial: 5000 + Int64(bits), key: key)
    }

    static func customKey(bits: Int) throws -> RSATestKey {
        let id = try customIdentity(bits: bits)
        return RSATestKey(id.key, certificate: id.leaf.der)
    }

    @Test func aSmallKeyVerifiesThroughTheSamePath() throws {
        // A 512-bit leaf, far below the 2048 bits of Apple's keys: the same check, the same verdicts.
        let id = try Self.customIdentity(bits: 512)
        func signed(flip: Bool) throws -> ParsedReceipt {
            var options = ReceiptSigner.Options()
            options.flipSignatureBit = flip
            let payload = TestCA.payload(created: TestCA.created2020, marker: "small-key")
            return try ParsedReceipt(ReceiptSigner.sign(payload: payload, identity: id, options: options))
        }
        let verifier = try TestCA.verifier()
        let good = try signed(flip: false).verify(with: verifier)
        #expect(good.verified, "\(good.detail ?? "")")
        #expect(good.entry?.publicKey != nil)
        #expect(try signed(flip: true).verify(with: verifier).error == .badSignature)
    }
}
