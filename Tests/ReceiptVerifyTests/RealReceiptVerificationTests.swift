import COpenSSL
import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptTestSupport
import Testing

@testable import ReceiptVerify

/// The real receipts in Tests/Fixtures/real against Apple's root and the StoreKit test certificate.
@Suite
struct RealReceiptVerificationTests {
    /// Fixture names by kind, from expected.json (not from the code under test).
    static func names(xcode: Bool) -> [String] {
        guard let expected = try? Fixtures.expected() else { return [] }
        return expected.compactMap { name, value in
            let env = (value as? [String: Any])?["environment"] as? String ?? ""
            return env.hasPrefix("Xcode") == xcode ? name : nil
        }.sorted()
    }

    static func load(_ name: String) throws -> ParsedReceipt {
        try ParsedReceipt(Fixtures.bytes(Fixtures.realDir.appendingPathComponent(name)))
    }

    static func expectedEntry(_ name: String) throws -> [String: Any] {
        try #require(try Fixtures.expected()[name] as? [String: Any])
    }

    @Test func fixtureSetHasSixteenAppleAndTwoXcodeReceipts() {
        #expect(Self.names(xcode: false).count == 16)
        #expect(Self.names(xcode: true).count == 2)
    }

    @Test(arguments: names(xcode: false))
    func appleSignedReceiptVerifiesAtItsCreationDate(name: String) throws {
        let receipt = try Self.load(name)
        let verifier = try TestAnchors.verifier([TestAnchors.applePath])
        let expected = try Self.expectedEntry(name)
        let created = try #require(receipt.creationDate)
        let expectedCreated = try #require((expected["receipt"] as? [String: Any])?["receipt_creation_date"] as? String)
        #expect(created == epochMilliseconds(expectedCreated))

        let outcome = receipt.verify(with: verifier, at: created)
        #expect(outcome.error == nil, "\(name): \(outcome.detail ?? "")")
        #expect(outcome.verified)
        #expect(outcome.status == .valid)
        // Apple's signing keys are RSA-2048.
        #expect(outcome.entry?.publicKey.map { EVP_PKEY_get_bits($0) } == 2048)
        // The signer is the first certificate listed in expected.json (the leaf).
        let certs = try #require(expected["certificates"] as? [[String: Any]])
        let fingerprints = certs.compactMap { $0["sha256_fingerprint"] as? String }
        #expect(outcome.signerSHA256 == fingerprints.first)
        #expect(
            outcome.digestAlgorithm == ((expected["digest_algorithms"] as? [String])?.first == "sha1" ? .sha1 : .sha256)
        )
    }

    /// With "now" as validation time (a fixed instant in November 2026, when this was written), every Apple
    /// receipt is rejected as expired: each chain holds a leaf whose notAfter is earlier (the newest, the G5
    /// sandbox leaf, expired 2026-08-23). This is why validity is judged at the receipt creation date.
    @Test(arguments: names(xcode: false))
    func appleSignedReceiptFailsAtTheCurrentDateBecauseItsCertificateExpired(name: String) throws {
        let now = epochMilliseconds("2026-11-21T00:00:00Z")
        let receipt = try Self.load(name)
        let verifier = try TestAnchors.verifier([TestAnchors.applePath])
        let outcome = receipt.verify(with: verifier, at: now)
        #expect(outcome.error == .certificateExpired)
        #expect(outcome.status == .notAuthenticated)
        // Why: the earliest notAfter in the chain (per expected.json) lies before "now".
        let certs = try #require(try Self.expectedEntry(name)["certificates"] as? [[String: Any]])
        let earliest = try #require(certs.compactMap { $0["not_after"] as? String }.map(epochMilliseconds).min())
        #expect(earliest < now)
        #expect(outcome.detail?.contains("expired at") == true)
    }

    @Test(arguments: names(xcode: true))
    func xcodeReceiptIsUntrustedWithOnlyApplesRoot(name: String) throws {
        let receipt = try Self.load(name)
        let outcome = receipt.verify(with: try TestAnchors.verifier([TestAnchors.applePath]))
        #expect(outcome.error == .untrustedChain)
        #expect(outcome.status == .notAuthenticated)
        #expect(outcome.signerSHA256 != nil)  // the signer was found; only the chain failed
    }

    @Test(arguments: names(xcode: true))
    func xcodeReceiptVerifiesWhenTheStoreKitCertificateIsAnAnchor(name: String) throws {
        let receipt = try Self.load(name)
        let verifier = try TestAnchors.verifier([TestAnchors.applePath, TestAnchors.storeKitPath])
        let outcome = receipt.verify(with: verifier)
        #expect(outcome.error == nil, "\(name): \(outcome.detail ?? "")")
        #expect(outcome.entry?.publicKey != nil)
        let certs = try #require(try Self.expectedEntry(name)["certificates"] as? [[String: Any]])
        #expect(outcome.signerSHA256 == certs.first?["sha256_fingerprint"] as? String)
    }

    @Test func oneVerifierHandlesEveryFixtureWithOneMissPerDistinctChain() throws {
        let verifier = try TestAnchors.verifier([TestAnchors.applePath, TestAnchors.storeKitPath])
        let all = Self.names(xcode: false) + Self.names(xcode: true)
        var chains = Set<[String]>()
        for name in all {
            let outcome = try Self.load(name).verify(with: verifier)
            #expect(outcome.verified, "\(name): \(outcome.detail ?? "")")
            let certs = try #require(try Self.expectedEntry(name)["certificates"] as? [[String: Any]])
            chains.insert(certs.compactMap { $0["sha256_fingerprint"] as? String })
        }
        #expect(verifier.cache.misses == chains.count)
        #expect(verifier.cache.hits == all.count - chains.count)
    }
}
