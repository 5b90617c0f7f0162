import Dispatch
import Foundation

/// A certificate that can sign receipts: the leaf, its key, and the certificates a receipt embeds.
public struct SigningIdentity: @unchecked Sendable {
    public let leaf: TestCertificate
    public let key: PrivateKey
    /// The certificates to embed in `SignedData.certificates`, leaf first (leaf, intermediate, root, as Apple does).
    public let chain: [TestCertificate]
}

/// The test certificate authority, shaped like Apple's: an RSA-2048 root; an intermediate with CA rights carrying
/// the WWDR marker OID 1.2.840.113635.100.6.2.1; a leaf carrying the receipt-signing OID 1.2.840.113635.100.6.11.1.
/// Plus variants for negative tests (``Variant``).
///
/// Every key is derived from `seed` (see `DeterministicRSA`) and every certificate is built byte by byte, so the
/// same seed always gives the same PKI, and receipts signed by it are reproducible without shipping private keys.
/// `load(directory:)` caches the PEM files there (key generation costs about a second for the whole set) and
/// reuses them on later runs.
public final class TestPKI: @unchecked Sendable {
    /// Which chain a receipt is signed with.
    public enum Variant: String, CaseIterable, Sendable {
        /// leaf -> intermediate -> root: verifies against `root`.
        case valid
        /// A different root with its own intermediate and leaf (names say "Foreign"): `untrusted_chain`.
        case foreignCA = "foreign-ca"
        /// Root, intermediate and leaf with byte-identical names and serials to the genuine ones but other keys:
        /// `untrusted_chain`.
        case impostor
        /// A "developer certificate" under the genuine intermediate, without the receipt-signing OID:
        /// `certificate_policy`.
        case developerLeaf = "developer-leaf"
        /// A leaf under an intermediate (issued by the genuine root) that lacks the WWDR OID: `certificate_policy`.
        case intermediateWithoutPolicy = "intermediate-without-policy"
        /// A leaf under an intermediate (issued by the genuine root) with `CA:FALSE`: `certificate_policy`.
        case intermediateWithoutCA = "intermediate-without-ca"
        /// A leaf valid only from 2010-01-01 to ``TestPKI/expiredLeafNotAfter`` (2012-06-30):
        /// `certificate_expired` for any receipt created later.
        case expiredLeaf = "expired-leaf"
        /// A leaf valid only from ``TestPKI/notYetValidLeafNotBefore`` (2037-01-01): `certificate_not_yet_valid`
        /// for any receipt created earlier.
        case notYetValidLeaf = "not-yet-valid-leaf"
    }

    /// The default seed of the project's test PKI (the one `data/test-root.pem` comes from).
    public static let defaultSeed = "receiptflow-test-pki-v1"

    /// Validity of the genuine chain, epoch seconds: root 2005-2045, intermediate 2008-2040, leaf 2010-2038.
    /// Receipts dated between 2010-01-01 and 2037-12-31 verify.
    public static let leafNotBefore = TimeText.epochMillis(2010, 1, 1) / 1000
    public static let leafNotAfter = TimeText.epochMillis(2038, 1, 1) / 1000
    /// Epoch seconds after which the `expiredLeaf` variant has expired.
    public static let expiredLeafNotAfter = TimeText.epochMillis(2012, 6, 30) / 1000
    /// Epoch seconds before which the `notYetValidLeaf` variant is not valid.
    public static let notYetValidLeafNotBefore = TimeText.epochMillis(2037, 1, 1) / 1000

    /// The genuine root: what `--trust-anchor` takes in tests.
    public var root: TestCertificate { certs["root"]! }
    public let seed: String
    private let certs: [String: TestCertificate]
    private let keys: [String: PrivateKey]

    /// The signing identity of a variant.
    public func identity(_ variant: Variant) -> SigningIdentity {
        let (leaf, intermediate, root) = Self.chainNames(variant)
        return SigningIdentity(
            leaf: certs[leaf]!, key: keys[leaf]!, chain: [certs[leaf]!, certs[intermediate]!, certs[root]!])
    }

    /// A leaf issued by the genuine intermediate with any validity window (epoch seconds), for boundary tests of
    /// validity at the receipt creation date. It reuses the genuine leaf's key (no key generation) unless `key` is
    /// given, carries the receipt-signing OID unless `receiptSigningOID` is false, and has serial `serial` (pick
    /// one above 1000 so it does not collide with the PKI's own).
    public func customLeaf(
        notBefore: Int64, notAfter: Int64, receiptSigningOID: Bool = true, serial: Int64 = 1000,
        commonName: String = "Receiptflow Test Receipt Signing (custom)", key: PrivateKey? = nil
    ) throws(SynthError) -> SigningIdentity {
        let interNode = Self.nodes.first { $0.name == "intermediate" }!
        let key = key ?? keys["leaf"]!
        let leaf = try CertificateBuilder.make(
            subject: CertificateBuilder.Name(
                organization: interNode.subject.organization, organizationalUnit: interNode.subject.organizationalUnit,
                commonName: commonName),
            subjectKey: key, issuer: interNode.subject, issuerKey: keys["intermediate"]!, serial: serial,
            profile: CertificateBuilder.Profile(
                isCA: false, markerOIDs: receiptSigningOID ? [CertificateBuilder.OIDs.receiptSigning] : [],
                notBefore: notBefore, notAfter: notAfter))
        return SigningIdentity(leaf: leaf, key: key, chain: [leaf, certs["intermediate"]!, certs["root"]!])
    }

    /// The certificate stored under `name` (`root`, `intermediate`, `leaf`, `foreign-root`, ...; see `nodes`).
    public func certificate(_ name: String) -> TestCertificate? { certs[name] }

    /// Loads the PKI from `directory` (PEM files `NAME.pem` and `NAME.key.pem`), creating and saving whatever is
    /// missing. With `directory == nil` everything is derived in memory.
    public static func load(directory: URL?, seed: String = defaultSeed) throws(SynthError) -> TestPKI {
        if let dir = directory {
            do {
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            } catch { throw SynthError("cannot create the CA directory \(dir.path): \(error)") }
        }
        // Keys: load the saved ones; derive the missing ones in parallel (each takes 50-300 ms).
        let names = nodes.map(\.name)
        var keyDER = [[UInt8]?](repeating: nil, count: names.count)
        for (i, name) in names.enumerated() {
            if let dir = directory,
                let text = try? String(contentsOf: dir.appendingPathComponent("\(name).key.pem"), encoding: .utf8)
            {
                keyDER[i] = try readable(
                    PEM.decode(text, label: "RSA PRIVATE KEY").first, dir.appendingPathComponent("\(name).key.pem"))
            }
        }
        let missing = keyDER.indices.filter { keyDER[$0] == nil }
        let derived = parallelMap(missing.count) { j in
            DeterministicRSA.privateKeyDER(seed: Array("\(seed)/\(names[missing[j]])".utf8))
        }
        for (j, i) in missing.enumerated() { keyDER[i] = derived[j] }

        var keys: [String: PrivateKey] = [:]
        var certs: [String: TestCertificate] = [:]
        for (i, node) in nodes.enumerated() {
            let key = try PrivateKey(der: keyDER[i]!)
            keys[node.name] = key
            if let dir = directory,
                let text = try? String(contentsOf: dir.appendingPathComponent("\(node.name).pem"), encoding: .utf8)
            {
                let file = dir.appendingPathComponent("\(node.name).pem")
                let der = try readable(PEM.decode(text, label: "CERTIFICATE").first, file)
                do throws(SynthError) {
                    certs[node.name] = try TestCertificate(der: der)
                } catch {
                    throw SynthError("\(file.path): \(error)")
                }
            } else {
                let issuerNode = nodes.first { $0.name == node.issuer }!
                certs[node.name] = try CertificateBuilder.make(
                    subject: node.subject, subjectKey: key, issuer: issuerNode.subject, issuerKey: keys[node.issuer]!,
                    serial: node.serial, profile: node.profile)
            }
            if let dir = directory {
                try writeIfMissing(
                    dir.appendingPathComponent("\(node.name).key.pem"), PEM.encode(key.der, label: "RSA PRIVATE KEY"))
                try writeIfMissing(dir.appendingPathComponent("\(node.name).pem"), certs[node.name]!.pem)
            }
        }
        return TestPKI(seed: seed, certs: certs, keys: keys)
    }

    /// The DER a file of the CA folder holds; a file that exists without a readable block is refused (it would
    /// otherwise be made again in memory while the damaged file stays, and a trust anchor differ from the signer).
    private static func readable(_ der: [UInt8]?, _ file: URL) throws(SynthError) -> [UInt8] {
        guard let der else {
            throw SynthError(
                "\(file.path) holds no readable PEM block (damaged?): remove it, and the files signed under it, or "
                    + "the whole folder, to make the test CA again")
        }
        return der
    }

    private init(seed: String, certs: [String: TestCertificate], keys: [String: PrivateKey]) {
        self.seed = seed
        self.certs = certs
        self.keys = keys
    }

    /// Writes `text` to `url` through a temporary name, unless the file exists (so concurrent creators agree).
    private static func writeIfMissing(_ url: URL, _ text: String) throws(SynthError) {
        guard !FileManager.default.fileExists(atPath: url.path) else { return }
        let tmp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        do {
            try Data(text.utf8).write(to: tmp)
            if rename(tmp.path, url.path) != 0 { throw SynthError("rename failed") }
        } catch { throw SynthError("cannot write \(url.path): \(error)") }
    }

    // MARK: - The nodes of the PKI

    private static func chainNames(_ v: Variant) -> (String, String, String) {
        switch v {
        case .valid: return ("leaf", "intermediate", "root")
        case .foreignCA: return ("foreign-leaf", "foreign-intermediate", "foreign-root")
        case .impostor: return ("impostor-leaf", "impostor-intermediate", "impostor-root")
        case .developerLeaf: return ("developer-leaf", "intermediate", "root")
        case .intermediateWithoutPolicy: return ("leaf-under-intermediate-no-policy", "intermediate-no-policy", "root")
        case .intermediateWithoutCA: return ("leaf-under-intermediate-no-ca", "intermediate-no-ca", "root")
        case .expiredLeaf: return ("expired-leaf", "intermediate", "root")
        case .notYetValidLeaf: return ("not-yet-valid-leaf", "intermediate", "root")
        }
    }

    struct Node {
        var name: String
        var issuer: String
        var subject: CertificateBuilder.Name
        var serial: Int64
        var profile: CertificateBuilder.Profile
    }

    /// Every certificate of the PKI, issuers before the certificates they sign.
    static let nodes: [Node] = {
        typealias N = CertificateBuilder.Name
        typealias P = CertificateBuilder.Profile
        let wwdr = [CertificateBuilder.OIDs.wwdrIntermediate]
        let signing = [CertificateBuilder.OIDs.receiptSigning]
        func secs(_ y: Int, _ m: Int = 1, _ d: Int = 1) -> Int64 { TimeText.epochMillis(y, m, d) / 1000 }
        let rootP = P(isCA: true, notBefore: secs(2005), notAfter: secs(2045))
        let interP = P(isCA: true, markerOIDs: wwdr, notBefore: secs(2008), notAfter: secs(2040))
        let leafP = P(isCA: false, markerOIDs: signing, notBefore: leafNotBefore, notAfter: leafNotAfter)
        let org = "Receiptflow Test"
        let caOU = "Receiptflow Test Certification Authority"
        let wwdrOU = "Receiptflow Test Worldwide Developer Relations"
        let root = N(organization: org, organizationalUnit: caOU, commonName: "Receiptflow Test Root CA")
        let inter = N(
            organization: org, organizationalUnit: wwdrOU,
            commonName: "Receiptflow Test Worldwide Developer Relations Certification Authority")
        let leaf = N(organization: org, organizationalUnit: wwdrOU, commonName: "Receiptflow Test Receipt Signing")
        let fOrg = "Foreign Test"
        let fRoot = N(organization: fOrg, organizationalUnit: "Foreign Test CA", commonName: "Foreign Test Root CA")
        let fInter = N(
            organization: fOrg, organizationalUnit: "Foreign Test CA", commonName: "Foreign Test Intermediate CA")
        let fLeaf = N(
            organization: fOrg, organizationalUnit: "Foreign Test CA", commonName: "Foreign Test Receipt Signing")
        var noPolicyInter = inter
        noPolicyInter.commonName = "Receiptflow Test Intermediate Without WWDR Policy"
        var noCAInter = inter
        noCAInter.commonName = "Receiptflow Test Intermediate Without CA Rights"
        var noCAP = interP
        noCAP.isCA = false
        var expiredP = leafP
        expiredP.notAfter = expiredLeafNotAfter
        var futureP = leafP
        futureP.notBefore = notYetValidLeafNotBefore
        futureP.notAfter = secs(2039)
        func leafNamed(_ cn: String) -> N { N(organization: org, organizationalUnit: wwdrOU, commonName: cn) }
        return [
            Node(name: "root", issuer: "root", subject: root, serial: 1, profile: rootP),
            Node(name: "intermediate", issuer: "root", subject: inter, serial: 2, profile: interP),
            Node(name: "leaf", issuer: "intermediate", subject: leaf, serial: 3, profile: leafP),
            Node(
                name: "developer-leaf", issuer: "intermediate",
                subject: leafNamed("Receiptflow Test Developer: Jane Appleseed"), serial: 4,
                profile: P(isCA: false, notBefore: leafNotBefore, notAfter: leafNotAfter)),
            Node(
                name: "expired-leaf", issuer: "intermediate",
                subject: leafNamed("Receiptflow Test Receipt Signing 2010"),
                serial: 5, profile: expiredP),
            Node(
                name: "not-yet-valid-leaf", issuer: "intermediate",
                subject: leafNamed("Receiptflow Test Receipt Signing 2037"), serial: 6, profile: futureP),
            Node(
                name: "intermediate-no-policy", issuer: "root", subject: noPolicyInter, serial: 7,
                profile: P(isCA: true, notBefore: secs(2008), notAfter: secs(2040))),
            Node(
                name: "leaf-under-intermediate-no-policy", issuer: "intermediate-no-policy",
                subject: leafNamed("Receiptflow Test Receipt Signing (no-policy intermediate)"), serial: 8,
                profile: leafP),
            Node(name: "intermediate-no-ca", issuer: "root", subject: noCAInter, serial: 9, profile: noCAP),
            Node(
                name: "leaf-under-intermediate-no-ca", issuer: "intermediate-no-ca",
                subject: leafNamed("Receiptflow Test Receipt Signing (non-CA intermediate)"), serial: 10, profile: leafP
            ),
            Node(name: "foreign-root", issuer: "foreign-root", subject: fRoot, serial: 101, profile: rootP),
            Node(name: "foreign-intermediate", issuer: "foreign-root", subject: fInter, serial: 102, profile: interP),
            Node(name: "foreign-leaf", issuer: "foreign-intermediate", subject: fLeaf, serial: 103, profile: leafP),
            // Same names, serials and profiles as the genuine chain; only the keys differ.
            Node(name: "impostor-root", issuer: "impostor-root", subject: root, serial: 1, profile: rootP),
            Node(name: "impostor-intermediate", issuer: "impostor-root", subject: inter, serial: 2, profile: interP),
            Node(name: "impostor-leaf", issuer: "impostor-intermediate", subject: leaf, serial: 3, profile: leafP),
        ]
    }()
}
