import Foundation
import ReceiptSynth
import Testing

/// The test PKI's ES256 signatures are deterministic (so generated JWS data is a function of its seed) and are
/// still ECDSA signatures OpenSSL accepts.
struct DeterministicECDSATests {
    static let pki = try! JWSTestPKI.load(directory: nil)

    @Test(arguments: ["leaf", "intermediate"])
    func theSameMessageGivesTheSameSignatureAndOpenSSLVerifiesIt(name: String) throws {
        let key = Self.pki.chain(leaf: name).key
        let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJzaWduZWREYXRlIjoxfQ".utf8)
        let first = key.signJWS(message)
        #expect(first.count == (key.curve == .p256 ? 64 : 96))
        #expect(key.signJWS(message) == first)
        #expect(key.verifyJWS(message, signature: first))
        var flipped = first
        flipped[flipped.count - 1] ^= 1
        #expect(!key.verifyJWS(message, signature: flipped))
        let other = key.signJWS(message + [0x41])
        #expect(other != first)
        // r differs too: the nonce depends on the message.
        #expect(other.prefix(first.count / 2) != first.prefix(first.count / 2))
    }

    @Test func aJWSOfTheFactoryIsTheSameTextEachTime() {
        let factory = JWSFactory(pki: Self.pki)
        let payload: [String: Any] = ["transactionId": "1", "signedDate": 1_700_000_000_000]
        #expect(factory.sign(payload) == factory.sign(payload))
        #expect(factory.sign(payload, kind: .otherRoot) == factory.sign(payload, kind: .otherRoot))
    }

    @Test func aDerivedKeyIsAFunctionOfItsSeed() throws {
        let a = try ECKey(.p256, derivedFrom: "seed/leaf")
        let b = try ECKey(.p256, derivedFrom: "seed/leaf")
        let c = try ECKey(.p256, derivedFrom: "seed/other")
        #expect(a.der == b.der)
        #expect(a.publicKeyInfo == b.publicKeyInfo)
        #expect(a.publicKeyInfo != c.publicKeyInfo)
        let p384 = try ECKey(.p384, derivedFrom: "seed/root")
        let message = Array("m".utf8)
        #expect(p384.verifyJWS(message, signature: p384.signJWS(message)))
    }

    @Test func aSeededPKIIsTheSameCertificatesEachTime() throws {
        let a = try JWSTestPKI.load(directory: nil, seed: "s")
        let b = try JWSTestPKI.load(directory: nil, seed: "s")
        #expect(a.root.der == b.root.der)
        #expect(a.chain(leaf: "leaf").x5c.map(\.der) == b.chain(leaf: "leaf").x5c.map(\.der))
        #expect(try JWSTestPKI.load(directory: nil, seed: "t").root.der != a.root.der)
    }
}
