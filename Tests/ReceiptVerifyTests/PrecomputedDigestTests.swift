import ReceiptDER
import ReceiptModel
import ReceiptSynth
import Testing

@testable import ReceiptVerify

/// `verify` with a content digest computed beforehand (two receipts at a time in the pipeline): the same verdicts
/// as without, every check kept, and a digest that is not of this very content never trusted.
struct PrecomputedDigestTests {
    /// SHA-1 and SHA-256, each with and without signed attributes.
    static let shapes: [(ReceiptSigner.Digest, Bool)] = [
        (.sha1, false), (.sha256, false), (.sha1, true), (.sha256, true),
    ]

    static func receipt(
        _ digest: ReceiptSigner.Digest, attributes: Bool, marker: String = "a", tamper: Bool = false
    ) throws -> ParsedReceipt {
        try TestCA.receipt(marker: marker) {
            $0.digest = digest
            if attributes { $0.signingTime = TestCA.created2020 / 1000 }
            if tamper { $0.embeddedContent = TestCA.payload(created: TestCA.created2020, marker: "tampered") }
        }
    }

    /// Verifies `r` with the digest `make` returns for its content buffer.
    static func verify(
        _ r: ParsedReceipt, _ verifier: ReceiptVerifier, _ make: (UnsafeRawBufferPointer) -> ContentDigest?
    ) -> VerifyOutcome {
        r.der.withUnsafeBytes { d in
            r.content.withUnsafeBytes { c in
                verifier.verify(
                    der: d, container: r.container, content: c, at: .receiptCreationDate, creationDate: r.creationDate,
                    contentDigest: make(c))
            }
        }
    }

    @Test(arguments: shapes)
    func pairedDigestsVerifyBothReceipts(_ shape: (ReceiptSigner.Digest, Bool)) throws {
        let verifier = try TestCA.verifier()
        let a = try Self.receipt(shape.0, attributes: shape.1, marker: "a")
        let b = try Self.receipt(shape.0, attributes: shape.1, marker: "bb")
        let alg = a.container.digestAlgorithm
        for hasher in ContentDigestTests.hashers {
            let (oa, ob) = a.content.withUnsafeBytes { x in
                b.content.withUnsafeBytes { y in
                    let (da, db) = hasher.contentDigests(x, alg, y, alg)
                    #expect(da != nil && db != nil)
                    let oa = a.der.withUnsafeBytes { d in
                        verifier.verify(
                            der: d, container: a.container, content: x, validationTime: a.creationDate!,
                            contentDigest: da)
                    }
                    let ob = b.der.withUnsafeBytes { d in
                        verifier.verify(
                            der: d, container: b.container, content: y, validationTime: b.creationDate!,
                            contentDigest: db)
                    }
                    return (oa, ob)
                }
            }
            #expect(
                oa.verified && ob.verified, "\(shape), two lanes: \(hasher.twoLane): \(oa.detail ?? ob.detail ?? "")")
        }
    }

    @Test(arguments: shapes)
    func aTamperedContentIsRejectedWithItsOwnDigest(_ shape: (ReceiptSigner.Digest, Bool)) throws {
        let verifier = try TestCA.verifier()
        let r = try Self.receipt(shape.0, attributes: shape.1, tamper: true)
        let alg = r.container.digestAlgorithm
        let outcome = Self.verify(r, verifier) { ContentHasher().contentDigests($0, alg, $0, alg).0 }
        #expect(outcome.error == .badSignature)
        if shape.1 { #expect(outcome.detail?.contains("messageDigest") == true) }
    }

    @Test(arguments: shapes)
    func aWrongDigestOfThisContentIsUsedAndRejected(_ shape: (ReceiptSigner.Digest, Bool)) throws {
        // Shows that the precomputed digest takes the place of hashing: a wrong value for the right buffer fails.
        let verifier = try TestCA.verifier()
        let r = try Self.receipt(shape.0, attributes: shape.1)
        let alg = r.container.digestAlgorithm
        let outcome = Self.verify(r, verifier) { c in
            var bogus = ContentHasher().contentDigest(c, alg)!.value
            bogus.words.0 ^= 1
            return ContentDigest(alg, bogus, of: c)
        }
        #expect(outcome.error == .badSignature)
        if shape.1 { #expect(outcome.detail?.contains("messageDigest") == true) }
    }

    @Test(arguments: shapes)
    func aDigestOfAnotherBufferOrAlgorithmIsIgnored(_ shape: (ReceiptSigner.Digest, Bool)) throws {
        let verifier = try TestCA.verifier()
        let r = try Self.receipt(shape.0, attributes: shape.1)
        let other = try Self.receipt(shape.0, attributes: shape.1, marker: "other")
        let alg = r.container.digestAlgorithm
        let wrongAlg: DigestAlgorithm = alg == .sha1 ? .sha256 : .sha1
        // Another receipt's content digest (a valid digest, of the wrong bytes): recomputed, so still verified.
        let foreign = other.content.withUnsafeBytes { ContentHasher().contentDigest($0, alg)! }
        #expect(Self.verify(r, verifier) { _ in foreign }.verified)
        // This buffer under the other algorithm.
        #expect(Self.verify(r, verifier) { ContentHasher().contentDigest($0, wrongAlg) }.verified)
        // And a corrupted digest of another buffer is ignored, not trusted.
        let corrupt = other.content.withUnsafeBytes { c in
            var v = ContentHasher().contentDigest(c, alg)!.value
            v.words.1 ^= 1
            return ContentDigest(alg, v, of: c)
        }
        #expect(Self.verify(r, verifier) { _ in corrupt }.verified)
    }
}
