import Foundation

/// A test PKI shaped like Apple's JWS chain: a P-384 root, a P-384 intermediate with CA rights carrying the WWDR
/// marker OID 1.2.840.113635.100.6.2.1, and a P-256 leaf carrying 1.2.840.113635.100.6.11.1; plus the chains the
/// bad kinds of ``JWSFactory`` need (another root, a leaf or intermediate without its OID, an expired leaf).
///
/// The EC keys are derived from a seed (``defaultSeed`` for `generate`), or random when none is given, so a seeded
/// PKI has the same keys on any machine; its certificates are signed by OpenSSL's ECDSA, randomized, so each fresh
/// PKI is other certificate bytes over those keys. Keys and certificates are made once and kept as DER files in a
/// directory (beside ``TestPKI``'s) and read back from it, so data generated at different times verifies against
/// the same root, and a directory filled earlier keeps its keys and certificates.
public final class JWSTestPKI: @unchecked Sendable {
    /// A chain to sign with: the leaf's key and the x5c certificates, leaf first.
    public struct Chain: @unchecked Sendable {
        public let key: ECKey
        public let x5c: [TestCertificate]
    }

    /// Validity of the genuine leaf, epoch seconds: JWS signed between 2015 and 2035 verify.
    public static let leafNotBefore = TimeText.epochMillis(2015, 1, 1) / 1000
    public static let leafNotAfter = TimeText.epochMillis(2035, 1, 1) / 1000
    /// The expired leaf's end: any signedDate after it gives `certificate_expired`.
    public static let expiredLeafNotAfter = TimeText.epochMillis(2016, 1, 1) / 1000

    /// The genuine root: the trust anchor of generated JWS.
    public var root: TestCertificate { certs["root"]! }
    private let certs: [String: TestCertificate]
    private let keys: [String: ECKey]

    /// The chain named `leaf` (see `nodes`) up to its root.
    public func chain(leaf: String) -> Chain {
        var x5c: [TestCertificate] = []
        var name = leaf
        while let node = Self.nodes.first(where: { $0.name == name }) {
            x5c.append(certs[name]!)
            if node.issuer == name { break }
            name = node.issuer
        }
        return Chain(key: keys[leaf]!, x5c: x5c)
    }

    /// The seed `generate` derives the keys from.
    public static let defaultSeed = "receiptflow-jws-test-pki-v1"

    /// Loads the keys and certificates from `directory` (`jws-*.key.der`, `jws-*.cert.der`), making the missing
    /// ones: keys derived from `seed` and the certificate's name, or random keys when `seed` is nil.
    /// Writes the root to `directory/jws-root.pem`. nil `directory`: nothing read or written.
    public static func load(directory: URL?, seed: String? = nil) throws(SynthError) -> JWSTestPKI {
        var keys: [String: ECKey] = [:]
        var certs: [String: TestCertificate] = [:]
        for node in nodes {
            let keyFile = directory?.appendingPathComponent("jws-\(node.name).key.der")
            let certFile = directory?.appendingPathComponent("jws-\(node.name).cert.der")
            if let keyFile, let certFile, let key = FileManager.default.contents(atPath: keyFile.path),
                let cert = FileManager.default.contents(atPath: certFile.path)
            {
                keys[node.name] = try ECKey(der: [UInt8](key), curve: node.curve)
                certs[node.name] = try TestCertificate(der: [UInt8](cert))
                continue
            }
            let key: ECKey
            if let seed {
                key = try ECKey(node.curve, derivedFrom: seed + "/" + node.name)
            } else {
                key = try ECKey(node.curve)
            }
            let issuer = nodes.first { $0.name == node.issuer }!
            let cert = try CertificateBuilder.make(
                subject: node.subject, subjectKey: key, issuer: issuer.subject,
                issuerKey: node.issuer == node.name ? key : keys[node.issuer]!, serial: node.serial,
                profile: node.profile)
            keys[node.name] = key
            certs[node.name] = cert
            if let keyFile, let certFile {
                try write(key.der, to: keyFile)
                try write(cert.der, to: certFile)
            }
        }
        let pki = JWSTestPKI(certs: certs, keys: keys)
        if let directory { try write(Array(pki.root.pem.utf8), to: directory.appendingPathComponent("jws-root.pem")) }
        return pki
    }

    private static func write(_ bytes: [UInt8], to file: URL) throws(SynthError) {
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: file, options: .atomic)
        } catch {
            throw SynthError("cannot write \(file.path): \(error.localizedDescription)")
        }
    }

    private init(certs: [String: TestCertificate], keys: [String: ECKey]) {
        self.certs = certs
        self.keys = keys
    }

    struct Node {
        var name: String
        var issuer: String
        var curve: ECKey.Curve
        var subject: CertificateBuilder.Name
        var serial: Int64
        var profile: CertificateBuilder.Profile
    }

    /// Every certificate, issuers first.
    static let nodes: [Node] = {
        typealias N = CertificateBuilder.Name
        typealias P = CertificateBuilder.Profile
        func secs(_ y: Int) -> Int64 { TimeText.epochMillis(y, 1, 1) / 1000 }
        let wwdr = [CertificateBuilder.OIDs.wwdrIntermediate]
        let signing = [CertificateBuilder.OIDs.receiptSigning]
        let org = "Receiptflow Test"
        let root = N(
            organization: org, organizationalUnit: "Receiptflow Test CA", commonName: "Receiptflow Test Root CA - G3")
        let inter = N(
            organization: org, organizationalUnit: "G6",
            commonName: "Receiptflow Test Worldwide Developer Relations Certification Authority")
        func leaf(_ cn: String) -> N {
            N(organization: org, organizationalUnit: "Receiptflow Test WWDR", commonName: cn)
        }
        let foreignRoot = N(organization: "Foreign Test", commonName: "Foreign Test Root CA - G3")
        let foreignInter = N(organization: "Foreign Test", commonName: "Foreign Test Intermediate")
        let rootP = P(isCA: true, notBefore: secs(2014), notAfter: secs(2039))
        let interP = P(isCA: true, markerOIDs: wwdr, notBefore: secs(2014), notAfter: secs(2036))
        let leafP = P(isCA: false, markerOIDs: signing, notBefore: leafNotBefore, notAfter: leafNotAfter)
        var expiredP = leafP
        expiredP.notAfter = expiredLeafNotAfter
        return [
            Node(name: "root", issuer: "root", curve: .p384, subject: root, serial: 1, profile: rootP),
            Node(name: "intermediate", issuer: "root", curve: .p384, subject: inter, serial: 2, profile: interP),
            Node(
                name: "leaf", issuer: "intermediate", curve: .p256,
                subject: leaf("Receiptflow Test ECC App Store Receipt Signing"), serial: 3, profile: leafP),
            Node(
                name: "leaf-without-oid", issuer: "intermediate", curve: .p256,
                subject: leaf("Receiptflow Test ECC Developer Signing"), serial: 4,
                profile: P(isCA: false, notBefore: leafNotBefore, notAfter: leafNotAfter)),
            Node(
                name: "expired-leaf", issuer: "intermediate", curve: .p256,
                subject: leaf("Receiptflow Test ECC Receipt Signing 2015"), serial: 5, profile: expiredP),
            Node(
                name: "intermediate-without-oid", issuer: "root", curve: .p384,
                subject: N(organization: org, commonName: "Receiptflow Test Intermediate Without WWDR OID"), serial: 6,
                profile: P(isCA: true, notBefore: secs(2014), notAfter: secs(2036))),
            Node(
                name: "leaf-under-intermediate-without-oid", issuer: "intermediate-without-oid", curve: .p256,
                subject: leaf("Receiptflow Test ECC Receipt Signing (no-OID intermediate)"), serial: 7, profile: leafP),
            Node(
                name: "foreign-root", issuer: "foreign-root", curve: .p384, subject: foreignRoot, serial: 101,
                profile: rootP),
            Node(
                name: "foreign-intermediate", issuer: "foreign-root", curve: .p384, subject: foreignInter, serial: 102,
                profile: interP),
            Node(
                name: "foreign-leaf", issuer: "foreign-intermediate", curve: .p256,
                subject: N(organization: "Foreign Test", commonName: "Foreign Test ECC Receipt Signing"), serial: 103,
                profile: leafP),
        ]
    }()
}
