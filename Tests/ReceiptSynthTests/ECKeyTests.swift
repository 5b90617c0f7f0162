import Foundation
import ReceiptSynth
import Testing

/// Seeded EC keys are a function of their seed; their ES256/ES384 signatures are OpenSSL's ECDSA, randomized, and
/// verify with OpenSSL.
struct ECKeyTests {
    @Test(arguments: [ECKey.Curve.p256, .p384])
    func aSeededKeySignsWhatOpenSSLVerifies(curve: ECKey.Curve) throws {
        let key = try ECKey(curve, derivedFrom: "seed/\(curve.rawValue)")
        let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJzaWduZWREYXRlIjoxfQ".utf8)
        let first = key.signJWS(message)
        #expect(first.count == (curve == .p256 ? 64 : 96))
        #expect(key.verifyJWS(message, signature: first))
        // Randomized: a second signature of the same message is other bytes, and verifies too.
        let second = key.signJWS(message)
        #expect(second != first)
        #expect(key.verifyJWS(message, signature: second))
        var flipped = first
        flipped[flipped.count - 1] ^= 1
        #expect(!key.verifyJWS(message, signature: flipped))
        #expect(!key.verifyJWS(message + [0x41], signature: first))
        let other = try ECKey(curve, derivedFrom: "seed/other")
        #expect(!other.verifyJWS(message, signature: first))
    }

    @Test func theSameSeedGivesTheSameKey() throws {
        let a = try ECKey(.p256, derivedFrom: "seed/leaf")
        let b = try ECKey(.p256, derivedFrom: "seed/leaf")
        let c = try ECKey(.p256, derivedFrom: "seed/other")
        #expect(a.der == b.der)
        #expect(a.publicKeyInfo == b.publicKeyInfo)
        #expect(a.publicKeyInfo != c.publicKeyInfo)
        // A key written and read back is the same key: it verifies what the original signs.
        let read = try ECKey(der: a.der, curve: .p256)
        #expect(read.publicKeyInfo == a.publicKeyInfo)
        let message = Array("m".utf8)
        #expect(read.verifyJWS(message, signature: a.signJWS(message)))
        #expect(try ECKey(.p384, derivedFrom: "seed/leaf").publicKeyInfo != a.publicKeyInfo)
    }

    @Test func aSeededPKIHasTheSameKeysEachTimeAndItsCertificatesAreRead() throws {
        let a = try JWSTestPKI.load(directory: nil, seed: "s")
        let b = try JWSTestPKI.load(directory: nil, seed: "s")
        for leaf in ["leaf", "expired-leaf", "foreign-leaf"] {
            #expect(a.chain(leaf: leaf).key.der == b.chain(leaf: leaf).key.der, "\(leaf)")
            let certs = zip(a.chain(leaf: leaf).x5c, b.chain(leaf: leaf).x5c)
            for (x, y) in certs {
                #expect(x.subject == y.subject && x.issuer == y.issuer && x.serial == y.serial, "\(leaf)")
            }
        }
        // Certificate signatures are randomized: two fresh PKIs are other certificate bytes over the same keys.
        #expect(a.root.der != b.root.der)
        #expect(
            try JWSTestPKI.load(directory: nil, seed: "t").chain(leaf: "leaf").key.der != a.chain(leaf: "leaf").key.der)

        // A directory filled once gives back the same certificates and keys.
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let written = try JWSTestPKI.load(directory: dir, seed: "s")
        let read = try JWSTestPKI.load(directory: dir, seed: "s")
        #expect(read.chain(leaf: "leaf").x5c == written.chain(leaf: "leaf").x5c)
        #expect(read.chain(leaf: "leaf").key.der == written.chain(leaf: "leaf").key.der)
        #expect(try String(contentsOf: dir.appendingPathComponent("jws-root.pem"), encoding: .utf8) == read.root.pem)
    }

    @Test func opensslVerifiesTheCertificateChainTheKeysSigned() throws {
        let pki = try JWSTestPKI.load(directory: nil, seed: "s")
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        func file(_ cert: TestCertificate, _ name: String) throws -> String {
            let url = dir.appendingPathComponent(name)
            try Data(cert.pem.utf8).write(to: url)
            return url.path
        }
        let x5c = pki.chain(leaf: "leaf").x5c
        try #require(x5c.count == 3)
        let root = try file(x5c[2], "root.pem")
        let intermediate = try file(x5c[1], "intermediate.pem")
        let leaf = try file(x5c[0], "leaf.pem")
        let verify = ["verify", "-CAfile", root, "-untrusted", intermediate, "-attime", "1700000000"]
        #expect(try OpenSSLTool.run(verify + [leaf]) == 0)
        // The judge can fail: the foreign root does not anchor the leaf.
        let foreign = try file(pki.chain(leaf: "foreign-leaf").x5c.last!, "foreign.pem")
        #expect(try OpenSSLTool.run(["verify", "-CAfile", foreign, "-untrusted", intermediate, leaf]) != 0)
    }
}
