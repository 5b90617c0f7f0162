import ReceiptDER
import ReceiptModel
import ReceiptSynth
import Testing

@testable import ReceiptVerify

/// Receipts signed by the project's own test CA: what must verify, and each way one must be rejected.
struct ReceiptVerifierTests {
    static let accepted: [(String, ReceiptSigner.Digest, ReceiptSigner.SignatureLabel, EncodingForm, Bool)] = [
        ("sha256 DER", .sha256, .rsaEncryption, .der, false),
        ("sha1 DER", .sha1, .rsaEncryption, .der, false),
        ("sha256 BER", .sha256, .rsaEncryption, .ber, false),
        ("sha256WithRSAEncryption label", .sha256, .sha256WithRSAEncryption, .ber, false),
        ("signed attributes sha256", .sha256, .rsaEncryption, .der, true),
        ("signed attributes sha1 BER", .sha1, .rsaEncryption, .ber, true),
    ]

    @Test(arguments: accepted)
    func acceptsGenuineReceipt(
        shape: (String, ReceiptSigner.Digest, ReceiptSigner.SignatureLabel, EncodingForm, Bool)
    ) throws {
        let (name, digest, label, form, attributes) = shape
        let receipt = try TestCA.receipt {
            $0.digest = digest
            $0.signatureLabel = label
            $0.form = form
            if attributes { $0.signingTime = TestCA.created2020 / 1000 }
        }
        #expect((receipt.container.signedAttributes != nil) == attributes)
        let outcome = receipt.verify(with: try TestCA.verifier())
        #expect(outcome.error == nil, "\(name): \(outcome.detail ?? "")")
        #expect(outcome.verified)
        #expect(outcome.signerSHA256 == TestCA.pki.identity(.valid).leaf.der.withUnsafeBytes { OpenSSL.sha256Hex($0) })
        #expect(outcome.detail == nil)
    }

    /// Verifies `receipt` against the test root and checks the code, the status it implies, and that the
    /// detail sentence is there.
    func expectRejected(
        _ receipt: ParsedReceipt, _ code: ErrorCode, signerFound: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let outcome = receipt.verify(with: try TestCA.verifier())
        #expect(outcome.error == code, "detail: \(outcome.detail ?? "")", sourceLocation: sourceLocation)
        #expect(!outcome.verified, sourceLocation: sourceLocation)
        #expect(outcome.status == code.status, sourceLocation: sourceLocation)
        #expect((outcome.signerSHA256 != nil) == signerFound, sourceLocation: sourceLocation)
        #expect(outcome.detail?.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test func rejectsTamperedPayload() throws {
        let other = TestCA.payload(created: TestCA.created2020, marker: "tampered")
        try expectRejected(try TestCA.receipt { $0.embeddedContent = other }, .badSignature)
    }

    @Test func rejectsTamperedPayloadUnderSignedAttributes() throws {
        let other = TestCA.payload(created: TestCA.created2020, marker: "tampered")
        let receipt = try TestCA.receipt {
            $0.embeddedContent = other
            $0.signingTime = TestCA.created2020 / 1000
        }
        try expectRejected(receipt, .badSignature)
        #expect(receipt.verify(with: try TestCA.verifier()).detail?.contains("messageDigest") == true)
    }

    @Test func rejectsFlippedSignatureBit() throws {
        try expectRejected(try TestCA.receipt { $0.flipSignatureBit = true }, .badSignature)
    }

    @Test func rejectsFlippedSignatureBitUnderSignedAttributes() throws {
        let receipt = try TestCA.receipt {
            $0.flipSignatureBit = true
            $0.signingTime = TestCA.created2020 / 1000
        }
        try expectRejected(receipt, .badSignature)
    }

    @Test func rejectsDigestAlgorithmMismatch() throws {
        // The SignedData lists SHA-1 while the SignerInfo (and the signature) use SHA-256.
        let receipt = try TestCA.receipt { $0.listedDigest = .sha1 }
        #expect(receipt.container.digestAlgorithmMismatch)
        try expectRejected(receipt, .badSignature)
    }

    @Test func rejectsForeignRoot() throws {
        try expectRejected(try TestCA.receipt(.foreignCA), .untrustedChain)
    }

    @Test func rejectsImpostorChainWithIdenticalNamesButOtherKeys() throws {
        let impostor = TestCA.pki.identity(.impostor)
        let genuine = TestCA.pki.identity(.valid)
        // The premise: names and serials are byte-identical, the certificates are not.
        #expect(impostor.leaf.issuer == genuine.leaf.issuer && impostor.leaf.serial == genuine.leaf.serial)
        #expect(impostor.chain.map(\.subject) == genuine.chain.map(\.subject))
        #expect(impostor.leaf.der != genuine.leaf.der)
        try expectRejected(try TestCA.receipt(.impostor), .untrustedChain)
    }

    @Test func rejectsImpostorLeafEmbeddedWithTheGenuineIntermediateAndRoot() throws {
        let genuine = TestCA.pki.identity(.valid)
        let impostor = TestCA.pki.identity(.impostor)
        let receipt = try TestCA.receipt(.impostor) { $0.certificates = [impostor.leaf] + genuine.chain.dropFirst() }
        try expectRejected(receipt, .untrustedChain)
    }

    @Test func rejectsDeveloperLeafWithoutReceiptSigningOID() throws {
        try expectRejected(try TestCA.receipt(.developerLeaf), .certificatePolicy)
    }

    @Test func rejectsIntermediateWithoutWWDROID() throws {
        try expectRejected(try TestCA.receipt(.intermediateWithoutPolicy), .certificatePolicy)
    }

    @Test func rejectsIntermediateWithoutCARights() throws {
        try expectRejected(try TestCA.receipt(.intermediateWithoutCA), .certificatePolicy)
    }

    @Test func rejectsLeafExpiredAtCreationDate() throws {
        // The expired-leaf variant is valid 2010-01-01 .. 2012-06-30; the receipt is dated 2020.
        try expectRejected(try TestCA.receipt(.expiredLeaf), .certificateExpired)
    }

    @Test func acceptsExpiredLeafVariantForReceiptCreatedWhileItWasValid() throws {
        let created2011: Int64 = 1_300_000_000_000  // 2011-03-13
        let outcome = try TestCA.receipt(.expiredLeaf, created: created2011).verify(with: try TestCA.verifier())
        #expect(outcome.verified, "\(outcome.detail ?? "")")
    }

    @Test func rejectsLeafNotYetValidAtCreationDate() throws {
        try expectRejected(try TestCA.receipt(.notYetValidLeaf), .certificateNotYetValid)
    }

    @Test func rejectsSignerMissingFromCertificates() throws {
        try expectRejected(try TestCA.receipt { $0.signerSerialMismatch = true }, .signerNotFound, signerFound: false)
    }

    @Test func rejectsReceiptWithNoEmbeddedCertificates() throws {
        let receipt = try TestCA.receipt { $0.certificates = [] }
        #expect(receipt.container.certificates.isEmpty)
        try expectRejected(receipt, .signerNotFound, signerFound: false)
    }

    @Test func rejectsLeafOnlyChainAsUntrusted() throws {
        // Without the intermediate there is no path from the leaf to the root.
        let receipt = try TestCA.receipt { $0.certificates = [TestCA.pki.identity(.valid).leaf] }
        try expectRejected(receipt, .untrustedChain)
    }

    @Test func rejectsMD5Digest() throws {
        let receipt = try TestCA.receipt { $0.digest = .md5 }
        #expect(receipt.container.digestAlgorithm == .unsupported)
        try expectRejected(receipt, .unsupportedAlgorithm)
    }

    @Test func rejectsSignatureLabelThatNamesAnotherDigest() throws {
        // sha256WithRSAEncryption over a SHA-1 digest: the declaration contradicts itself.
        let receipt = try TestCA.receipt {
            $0.digest = .sha1
            $0.signatureLabel = .sha256WithRSAEncryption
        }
        try expectRejected(receipt, .unsupportedAlgorithm)
    }

    @Test func signerIsReportedEvenWhenTheChainFails() throws {
        let outcome = try TestCA.receipt(.foreignCA).verify(with: try TestCA.verifier())
        let foreignLeaf = TestCA.pki.identity(.foreignCA).leaf.der
        #expect(outcome.signerSHA256 == foreignLeaf.withUnsafeBytes { OpenSSL.sha256Hex($0) })
    }

    @Test func validityIsJudgedAtTheGivenTimeNotTheClock() throws {
        let receipt = try TestCA.receipt()
        let verifier = try TestCA.verifier()
        let leafNotAfterMs = TestPKI.leafNotAfter * 1000
        #expect(receipt.verify(with: verifier, at: leafNotAfterMs).verified)
        #expect(receipt.verify(with: verifier, at: leafNotAfterMs + 1000).error == .certificateExpired)
        #expect(
            receipt.verify(with: verifier, at: TestPKI.leafNotBefore * 1000 - 1000).error == .certificateNotYetValid)
    }

    /// `establish` only computes: a chain without an anchor is left to the trust policies, its signature
    /// unchecked; an expired leaf's signature is checked and its dates left to them; `verify` judges both.
    @Test func establishLeavesTheTrustFactsToThePolicies() throws {
        let verifier = try TestCA.verifier()
        func establish(_ r: ParsedReceipt) -> VerifyOutcome {
            r.der.withUnsafeBytes { d in
                r.content.withUnsafeBytes { c in
                    verifier.establish(
                        der: d, container: r.container, content: c, at: .receiptCreationDate,
                        creationDate: r.creationDate)
                }
            }
        }
        let foreign = try TestCA.receipt(.foreignCA)
        let untrusted = establish(foreign)
        #expect(untrusted.error == nil)
        #expect(!untrusted.signatureVerified)
        #expect(untrusted.trust?.chain.anchored == false)
        #expect(foreign.verify(with: verifier).error == .untrustedChain)

        let expiredLeaf = try TestCA.receipt(.expiredLeaf)
        let expired = establish(expiredLeaf)
        #expect(expired.error == nil)
        #expect(expired.signatureVerified)
        let facts = try #require(expired.trust)
        #expect(facts.chain.anchored && facts.chain.policyOIDsOK)
        #expect(try #require(facts.signedAt) > facts.chain.validUntil)
        #expect(TrustPolicies.standard.judge(facts) == TrustFailure(.expired))
        #expect(expiredLeaf.verify(with: verifier).error == .certificateExpired)
    }
}
