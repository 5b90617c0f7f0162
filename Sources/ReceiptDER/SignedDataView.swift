import ReceiptModel

/// The digest algorithm named by the SignerInfo.
public enum DigestAlgorithm: Sendable, Equatable {
    case sha1
    case sha256
    /// Anything else (MD5, SHA-384, ...): reported as `unsupported_algorithm`.
    case unsupported

    public var name: StaticString {
        switch self {
        case .sha1: return "sha1"
        case .sha256: return "sha256"
        case .unsupported: return "unsupported"
        }
    }
}

/// The signature algorithm label of the SignerInfo. Apple writes `rsaEncryption`; Xcode receipts since 2021
/// write `sha256WithRSAEncryption`. Both mean RSA PKCS #1 v1.5 over the SignerInfo's digest.
public enum SignatureAlgorithm: Sendable, Equatable {
    case rsaEncryption
    case sha1WithRSA
    case sha256WithRSA
    case unsupported
}

/// How the outer container was encoded.
public enum ContainerEncoding: Sendable, Equatable {
    /// Definite lengths throughout (Apple-signed receipts).
    case der
    /// Indefinite lengths and/or a constructed OCTET STRING (Xcode / StoreKit-testing receipts).
    case ber
}

/// Where the parts of a PKCS #7 `SignedData` receipt lie. Every range indexes the input buffer given to the
/// parser, except `content` when `contentInScratch` is true (then it indexes the parser's scratch buffer).
public struct SignedDataView: Sendable {
    public var encoding: ContainerEncoding = .der
    /// The encapsulated content (the receipt payload), concatenated when it was a constructed OCTET STRING.
    public var content: Range<Int> = 0..<0
    public var contentInScratch: Bool = false
    /// Full TLVs of the embedded certificates, in order. Reused between parses; do not keep.
    public var certificates: [Range<Int>] = []
    /// Full TLV of the SignerInfo's issuer Name.
    public var signerIssuer: Range<Int> = 0..<0
    /// Contents octets of the SignerInfo's serial number INTEGER.
    public var signerSerial: Range<Int> = 0..<0
    public var digestAlgorithm: DigestAlgorithm = .unsupported
    /// True when the SignedData digestAlgorithms set and the SignerInfo disagree.
    public var digestAlgorithmMismatch: Bool = false
    /// Full TLV of the `[0] IMPLICIT` signed attributes (tag byte 0xA0 at its first index), when present.
    public var signedAttributes: Range<Int>? = nil
    /// Contents of the `messageDigest` signed attribute's OCTET STRING, when signed attributes are present.
    public var messageDigest: Range<Int>? = nil
    public var signatureAlgorithm: SignatureAlgorithm = .unsupported
    /// Contents of the signature OCTET STRING.
    public var signature: Range<Int> = 0..<0

    public init() {}
}
