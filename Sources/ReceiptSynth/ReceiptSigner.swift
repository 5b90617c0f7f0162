/// Builds PKCS #7 `SignedData` receipts (RFC 2315 / RFC 5652) around a payload, signed through OpenSSL with RSA
/// PKCS #1 v1.5, in the shapes real receipts take, plus knobs that break exactly one thing for negative tests.
///
/// ```swift
/// let pki = try TestPKI.load(directory: caDir)
/// let der = ReceiptSigner.sign(payload: payload, identity: pki.identity(.valid), options: .init(digest: .sha256))
/// ```
public enum ReceiptSigner {
    /// The digest algorithm (SignedData `digestAlgorithms` and SignerInfo `digestAlgorithm`).
    public enum Digest: String, Sendable, CaseIterable {
        case sha1, sha256
        /// Only for the `unsupported_algorithm` test; a verifier must reject it.
        case md5

        var oid: String {
            switch self {
            case .sha1: return "1.3.14.3.2.26"
            case .sha256: return "2.16.840.1.101.3.4.2.1"
            case .md5: return "1.2.840.113549.2.5"
            }
        }
        var md: OpaquePointer {
            switch self {
            case .sha1: return Crypto.sha1MD
            case .sha256: return Crypto.sha256MD
            case .md5: return Crypto.md5MD
            }
        }
        /// The digest of `bytes`.
        public func hash(_ bytes: [UInt8]) -> [UInt8] { Crypto.digest(bytes, md) }
    }

    /// The SignerInfo's `signatureAlgorithm` label. Both mean RSA PKCS #1 v1.5 over the digest above.
    public enum SignatureLabel: String, Sendable, CaseIterable {
        /// What Apple writes.
        case rsaEncryption
        /// What Xcode receipts write since 2021.
        case sha256WithRSAEncryption
        var oid: String {
            switch self {
            case .rsaEncryption: return "1.2.840.113549.1.1.1"
            case .sha256WithRSAEncryption: return "1.2.840.113549.1.1.11"
            }
        }
    }

    /// How to sign and encode one receipt. The defaults make an Apple-like DER receipt.
    public struct Options: Sendable {
        public var digest: Digest = .sha256
        public var signatureLabel: SignatureLabel = .rsaEncryption
        public var form: EncodingForm = .der
        /// When set, the SignerInfo carries signed attributes (contentType, signingTime at this epoch-seconds
        /// instant, messageDigest) and the signature covers their DER SET instead of the content digest.
        public var signingTime: Int64? = nil
        /// Names the signer with a serial that no embedded certificate has (`signer_not_found`).
        public var signerSerialMismatch = false
        /// When set, SignedData.digestAlgorithms lists this algorithm instead of `digest` (a disagreement with
        /// the SignerInfo).
        public var listedDigest: Digest? = nil
        /// When set, this is embedded as the content, while the signature covers the real payload (a payload
        /// tampered with after signing: `bad_signature`).
        public var embeddedContent: [UInt8]? = nil
        /// Flips one bit in the middle of the signature (`bad_signature`).
        public var flipSignatureBit = false
        /// Certificates to embed instead of the identity's chain (e.g. only the leaf, or none).
        public var certificates: [TestCertificate]? = nil
        /// When set, makes the signature instead of PKCS #1 v1.5 signing: called with the digest the signature
        /// must cover and the signer's key, it returns the signature bytes to embed (tests of the verifier's
        /// RSA check, e.g. through `PrivateKey.rawPrivateOperation` on a crafted block).
        public var signature: (@Sendable (_ signedDigest: [UInt8], _ key: PrivateKey) -> [UInt8])? = nil
        /// Leaves the signature unmade: the SignerInfo holds zero bytes as long as the key's signatures, so the
        /// receipt has the shape of a signed one at none of the private-key cost, and any verifier rejects it
        /// (`bad_signature`). For corpora exported without verification only.
        public var unsigned = false

        public init(
            digest: Digest = .sha256, signatureLabel: SignatureLabel = .rsaEncryption, form: EncodingForm = .der
        ) {
            self.digest = digest
            self.signatureLabel = signatureLabel
            self.form = form
        }
    }

    static let signedDataOID = "1.2.840.113549.1.7.2"
    static let dataOID = "1.2.840.113549.1.7.1"
    static let contentTypeOID = "1.2.840.113549.1.9.3"
    static let messageDigestOID = "1.2.840.113549.1.9.4"
    static let signingTimeOID = "1.2.840.113549.1.9.5"

    /// The receipt bytes (`ContentInfo` of type signedData) for `payload`, signed by `identity`.
    public static func sign(payload: [UInt8], identity: SigningIdentity, options: Options = Options()) -> [UInt8] {
        let digestAlg = DER.algorithm(options.digest.oid)
        let contentDigest = options.digest.hash(payload)

        // The signed attributes are a DER SET OF (sorted) so that any CMS verifier re-encoding them gets the same
        // bytes; the signature covers that SET with its universal tag, the SignerInfo stores it as [0] IMPLICIT.
        var signedAttrs: [UInt8]? = nil
        var toSign = contentDigest
        if let t = options.signingTime {
            let set = DER.set(
                [
                    DER.sequence([DER.oid(contentTypeOID), DER.set([DER.oid(dataOID)])]),
                    DER.sequence([DER.oid(signingTimeOID), DER.set([DER.time(epochSeconds: t)])]),
                    DER.sequence([DER.oid(messageDigestOID), DER.set([DER.octetString(contentDigest)])]),
                ], sorted: true)
            signedAttrs = [0xA0] + set.dropFirst()
            toSign = options.digest.hash(set)
        }
        var signature: [UInt8]
        if options.unsigned {
            signature = [UInt8](repeating: 0, count: identity.key.signatureSize)
        } else {
            signature =
                options.signature?(toSign, identity.key) ?? identity.key.sign(digest: toSign, md: options.digest.md)
        }
        if options.flipSignatureBit { signature[signature.count / 2] ^= 0x10 }

        var serial = identity.leaf.serial
        if options.signerSerialMismatch { serial = [0x7F] + Array(Crypto.sha1(serial).prefix(8)) }
        var signerInfo: [[UInt8]] = [
            DER.integer(1),
            DER.sequence([identity.leaf.issuer, DER.tlv(DER.tagInteger, serial)]),
            digestAlg,
        ]
        if let a = signedAttrs { signerInfo.append(a) }
        signerInfo += [DER.algorithm(options.signatureLabel.oid), DER.octetString(signature)]

        let certificates = (options.certificates ?? identity.chain).flatMap(\.der)
        let listed = DER.set([DER.algorithm((options.listedDigest ?? options.digest).oid)])
        let content = options.embeddedContent ?? payload
        // Streaming encoders open ContentInfo, [0], SignedData, encapContentInfo and its [0] before knowing their
        // sizes: those are the indefinite-length ones in BER; certificates and signerInfos stay definite.
        let signedData = ASN1Node.constructed(
            tag: 0x30,
            children: [
                .encoded(DER.integer(1)),
                .encoded(listed),
                .constructed(
                    tag: 0x30,
                    children: [
                        .encoded(DER.oid(dataOID)),
                        .constructed(tag: 0xA0, children: [.chunkedOctetString(content)], indefiniteInBER: true),
                    ], indefiniteInBER: true),
                .encoded(certificates.isEmpty ? [] : DER.context(0, certificates)),
                .encoded(DER.set([DER.sequence(signerInfo)])),
            ], indefiniteInBER: true)
        let contentInfo = ASN1Node.constructed(
            tag: 0x30,
            children: [
                .encoded(DER.oid(signedDataOID)),
                .constructed(tag: 0xA0, children: [signedData], indefiniteInBER: true),
            ], indefiniteInBER: true)
        return contentInfo.encode(options.form)
    }
}
