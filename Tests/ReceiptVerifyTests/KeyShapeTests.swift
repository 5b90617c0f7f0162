import Foundation
import ReceiptModel
import ReceiptSynth
import ReceiptTestSupport
import Testing

@testable import ReceiptVerify

/// Keys no Apple certificate has are refused before any signature by or over them is checked, as
/// `unsupported_algorithm`; Apple's own keys pass.
struct KeyShapeTests {
    /// A leaf issued by the genuine test intermediate (so its chain is trusted) holding `key`.
    static func receipt(signedWith key: PrivateKey, serial: Int64) throws -> ParsedReceipt {
        let identity = try TestCA.pki.customLeaf(
            notBefore: TestPKI.leafNotBefore, notAfter: TestPKI.leafNotAfter, serial: serial, key: key)
        return try ParsedReceipt(
            ReceiptSigner.sign(payload: TestCA.payload(created: TestCA.created2020), identity: identity))
    }

    @Test func applesRootsAndStoreKitCertificateHaveAcceptedKeys() throws {
        for name in ["AppleIncRootCertificate.cer", "AppleRootCA-G3.cer", "StoreKitTestCertificate.cer"] {
            let der = [UInt8](try Data(contentsOf: Fixtures.certsDir.appendingPathComponent(name)))
            #expect(der.withUnsafeBytes { KeyShape.refusal(certificateDER: $0) } == nil, "\(name)")
        }
    }

    @Test func everyRealReceiptsChainHasAcceptedKeys() throws {
        let verifier = try TestAnchors.verifier([TestAnchors.applePath, TestAnchors.storeKitPath])
        var checked = 0
        for name in Fixtures.realReceiptNames() {
            let url = Fixtures.realDir.appendingPathComponent(name)
            guard let receipt = try? ParsedReceipt(try Fixtures.bytes(url)) else { continue }
            let outcome = receipt.verify(with: verifier)
            #expect(outcome.error != .unsupportedAlgorithm, "\(name): \(outcome.detail ?? "")")
            checked += 1
        }
        #expect(checked >= 10)
    }

    @Test func aHugePublicExponentIsRefusedAsUnsupportedAlgorithm() throws {
        // e = 2^512 + 1: odd, and hundreds of times the work of 65537 for every verification.
        let exponent: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 63) + [0x01]
        let key = try PrivateKey.generated(bits: 2048, exponent: exponent)
        let receipt = try Self.receipt(signedWith: key, serial: 7001)
        let verifier = try TestCA.verifier()
        let outcome = receipt.verify(with: verifier)
        #expect(outcome.error == .unsupportedAlgorithm)
        #expect(outcome.detail?.contains("public exponent") == true, "\(outcome.detail ?? "")")
        // The refusal is the chain's: another receipt under it is refused from the cache.
        let again = receipt.verify(with: verifier)
        #expect(again.error == .unsupportedAlgorithm)
        #expect(verifier.cache.misses == 1)
    }

    @Test func aSmallPublicExponentIsRefusedToo() throws {
        let key = try PrivateKey.generated(bits: 2048, exponent: [0x03])
        let outcome = try Self.receipt(signedWith: key, serial: 7002).verify(with: try TestCA.verifier())
        #expect(outcome.error == .unsupportedAlgorithm)
        #expect(outcome.detail?.contains("public exponent 3;") == true, "\(outcome.detail ?? "")")
    }

    @Test func aModulusOverFourThousandNinetySixBitsIsRefused() throws {
        let key = try PrivateKey.generated(bits: 4160, exponent: [0x01, 0x00, 0x01])
        let outcome = try Self.receipt(signedWith: key, serial: 7003).verify(with: try TestCA.verifier())
        #expect(outcome.error == .unsupportedAlgorithm)
        #expect(outcome.detail?.contains("4160-bit RSA key") == true, "\(outcome.detail ?? "")")
    }

    @Test func aFourThousandNinetySixBitModulusWithExponent65537IsAccepted() throws {
        let key = try PrivateKey.generated(bits: 4096, exponent: [0x01, 0x00, 0x01])
        let outcome = try Self.receipt(signedWith: key, serial: 7004).verify(with: try TestCA.verifier())
        #expect(outcome.verified, "\(outcome.detail ?? "")")
    }
}
