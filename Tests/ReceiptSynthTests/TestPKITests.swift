import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptSynth
import ReceiptTestSupport
import Testing

@Suite struct TestPKITests {
    static let pki = SharedPKI.pki

    static func view(_ c: TestCertificate) throws -> CertificateView {
        try c.der.withUnsafeBytes { buf in try CertificateView.parse(buf, 0..<buf.count) }
    }

    /// True when the certificate's extensions contain the OID's bytes.
    static func extensions(_ c: TestCertificate, contain dotted: String) throws -> Bool {
        let v = try view(c)
        guard let r = v.extensions else { return false }
        return Array(c.der[r]).windowContains(DER.oid(dotted))
    }

    static let wwdr = "1.2.840.113635.100.6.2.1"
    static let signing = "1.2.840.113635.100.6.11.1"

    @Test func genuineChainCarriesAppleShapedMarkers() throws {
        let id = Self.pki.identity(.valid)
        #expect(id.chain.count == 3)
        #expect(id.chain[0] == id.leaf)
        #expect(try Self.extensions(id.chain[0], contain: Self.signing))
        #expect(try Self.extensions(id.chain[1], contain: Self.wwdr))
        #expect(try !Self.extensions(id.chain[2], contain: Self.wwdr))
        #expect(id.chain[2] == Self.pki.root)
        // Each certificate names the next one's subject as issuer.
        #expect(id.chain[0].issuer == id.chain[1].subject)
        #expect(id.chain[1].issuer == id.chain[2].subject)
        #expect(id.chain[2].issuer == id.chain[2].subject)
    }

    @Test func variantsBreakExactlyTheirOwnRule() throws {
        let genuine = Self.pki.identity(.valid)
        let developer = Self.pki.identity(.developerLeaf)
        #expect(try !Self.extensions(developer.leaf, contain: Self.signing))
        #expect(developer.chain[1] == genuine.chain[1])

        let noPolicy = Self.pki.identity(.intermediateWithoutPolicy)
        #expect(try !Self.extensions(noPolicy.chain[1], contain: Self.wwdr))
        #expect(try Self.extensions(noPolicy.leaf, contain: Self.signing))
        #expect(noPolicy.chain[1].issuer == Self.pki.root.subject)

        let noCA = Self.pki.identity(.intermediateWithoutCA)
        #expect(try Self.extensions(noCA.chain[1], contain: Self.wwdr))
        #expect(noCA.chain[1].der != genuine.chain[1].der)

        let impostor = Self.pki.identity(.impostor)
        for (a, b) in zip(impostor.chain, genuine.chain) {
            #expect(a.subject == b.subject)
            #expect(a.issuer == b.issuer)
            #expect(a.serial == b.serial)
            #expect(try Self.view(a).subjectPublicKeyInfo != Self.view(b).subjectPublicKeyInfo || a.der != b.der)
            #expect(a.der != b.der)
        }

        let foreign = Self.pki.identity(.foreignCA)
        #expect(foreign.chain[2].subject != Self.pki.root.subject)
    }

    @Test func validityWindowsMatchTheDocumentedDates() throws {
        let leaf = try Self.view(Self.pki.identity(.valid).leaf)
        #expect(leaf.notBefore == TestPKI.leafNotBefore * 1000)
        #expect(leaf.notAfter == TestPKI.leafNotAfter * 1000)
        #expect(try Self.view(Self.pki.identity(.expiredLeaf).leaf).notAfter == TestPKI.expiredLeafNotAfter * 1000)
        #expect(
            try Self.view(Self.pki.identity(.notYetValidLeaf).leaf).notBefore == TestPKI.notYetValidLeafNotBefore * 1000
        )
    }

    @Test
    func customLeavesHaveTheAskedValidityAndChainToTheRoot() throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        var b = PayloadBuilder()
        b.utf8(2, "com.example.custom")
        let now = Int64(Date().timeIntervalSince1970)
        let current = try Self.pki.customLeaf(notBefore: now - 86_400, notAfter: now + 86_400, serial: 1001)
        #expect(try Self.view(current.leaf).notAfter == (now + 86_400) * 1000)
        #expect(try Self.extensions(current.leaf, contain: Self.signing))
        let lapsed = try Self.pki.customLeaf(notBefore: now - 2 * 86_400, notAfter: now - 86_400, serial: 1002)
        let unmarked = try Self.pki.customLeaf(
            notBefore: now - 86_400, notAfter: now + 86_400, receiptSigningOID: false, serial: 1003)
        #expect(try !Self.extensions(unmarked.leaf, contain: Self.signing))
        // openssl checks validity at the current time, which these windows straddle.
        let ok = try OpenSSLTool.cmsVerify(
            der: ReceiptSigner.sign(payload: b.encode(), identity: current), rootPEM: Self.pki.root.pem, in: dir,
            name: "current")
        let expired = try OpenSSLTool.cmsVerify(
            der: ReceiptSigner.sign(payload: b.encode(), identity: lapsed), rootPEM: Self.pki.root.pem, in: dir,
            name: "lapsed")
        #expect(ok)
        #expect(!expired)
    }

    /// The PKI is a function of its seed: a fresh directory, a reload from files, and the in-memory PKI agree,
    /// and the committed public root is this root.
    @Test func pkiIsReproducibleFromItsSeedAndReloadsFromDisk() throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let created = try TestPKI.load(directory: dir)
        let reloaded = try TestPKI.load(directory: dir)
        for v in TestPKI.Variant.allCases {
            #expect(created.identity(v).chain == Self.pki.identity(v).chain, "\(v)")
            #expect(reloaded.identity(v).chain == Self.pki.identity(v).chain, "\(v)")
            #expect(reloaded.identity(v).key.der == Self.pki.identity(v).key.der, "\(v)")
        }
        let other = try TestPKI.load(directory: nil, seed: "another seed")
        #expect(other.root.der != Self.pki.root.der)
        let committed = Fixtures.dataDir.appendingPathComponent("test-root.pem")
        if FileManager.default.fileExists(atPath: committed.path) {
            #expect(try String(contentsOf: committed, encoding: .utf8) == Self.pki.root.pem)
        }
    }

    /// A damaged file in the CA folder is refused naming it, not silently made again in memory.
    @Test func aDamagedFileInTheCAFolderIsRefusedNamingIt() throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try TestPKI.load(directory: dir)
        for name in ["intermediate.pem", "leaf.key.pem"] {
            let file = dir.appendingPathComponent(name)
            let good = try Data(contentsOf: file)
            var text = String(decoding: good, as: UTF8.self)
            text = text.replacingOccurrences(of: "-----END", with: "!!!!\n-----END")
            try Data(text.utf8).write(to: file)
            #expect {
                try TestPKI.load(directory: dir)
            } throws: { error in
                "\(error)".contains(file.path) && "\(error)".contains("no readable PEM block")
            }
            try good.write(to: file)
        }
        #expect(try TestPKI.load(directory: dir).root.der == Self.pki.root.der)
    }
}
