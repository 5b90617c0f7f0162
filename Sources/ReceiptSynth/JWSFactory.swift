import Foundation
import ReceiptModel

/// Makes compact JWS the way Apple's servers sign them (ES256, `x5c` leaf-intermediate-root), and every bad kind a
/// verifier must reject, each with the error code it must get.
public struct JWSFactory: Sendable {
    /// What is wrong with a generated JWS (`good`: nothing).
    public enum Kind: String, CaseIterable, Sendable {
        case good
        /// `alg` says ES384 over an ES256 signature: `unsupported_algorithm`.
        case wrongAlg = "wrong-alg"
        /// `alg: none` and an empty signature: `unsupported_algorithm`.
        case algNone = "alg-none"
        /// One bit of the signature flipped: `bad_signature`.
        case brokenSignature = "broken-signature"
        /// Signed by a chain to another root: `untrusted_chain`.
        case otherRoot = "other-root"
        /// The leaf lacks 1.2.840.113635.100.6.11.1: `certificate_policy`.
        case missingLeafOID = "missing-leaf-oid"
        /// The intermediate lacks 1.2.840.113635.100.6.2.1: `certificate_policy`.
        case missingIntermediateOID = "missing-intermediate-oid"
        /// The leaf expired before the payload's signedDate: `certificate_expired`.
        case expiredAtSignedDate = "expired-at-signed-date"
        /// A byte outside the base64url alphabet in the payload: `jws_malformed`.
        case malformedBase64URL = "malformed-base64url"
        /// `x5c` holds the leaf and intermediate only: `untrusted_chain`.
        case truncatedX5c = "truncated-x5c"

        /// The `error_code` a verifier must give (nil for `good`).
        public var expectedCode: String? {
            switch self {
            case .good: return nil
            case .wrongAlg, .algNone: return "unsupported_algorithm"
            case .brokenSignature: return "bad_signature"
            case .otherRoot, .truncatedX5c: return "untrusted_chain"
            case .missingLeafOID, .missingIntermediateOID: return "certificate_policy"
            case .expiredAtSignedDate: return "certificate_expired"
            case .malformedBase64URL: return "jws_malformed"
            }
        }
    }

    public let pki: JWSTestPKI

    public init(pki: JWSTestPKI) { self.pki = pki }

    /// `payload` (a JSON object) signed as a compact JWS of `kind`.
    public func sign(_ payload: [String: Any], kind: Kind = .good) -> String {
        let leaf: String
        switch kind {
        case .otherRoot: leaf = "foreign-leaf"
        case .missingLeafOID: leaf = "leaf-without-oid"
        case .missingIntermediateOID: leaf = "leaf-under-intermediate-without-oid"
        case .expiredAtSignedDate: leaf = "expired-leaf"
        default: leaf = "leaf"
        }
        let chain = pki.chain(leaf: leaf)
        var x5c = chain.x5c.map { Data($0.der).base64EncodedString() }
        if kind == .truncatedX5c { x5c.removeLast() }
        let alg = kind == .wrongAlg ? "ES384" : kind == .algNone ? "none" : "ES256"
        let header = Self.json(["alg": alg, "x5c": x5c])
        let body = Self.json(payload)
        var payloadText = Self.base64url(body)
        let signingInput = Self.base64url(header) + "." + payloadText
        var signature = kind == .algNone ? [] : chain.key.signJWS(Array(signingInput.utf8))
        if kind == .brokenSignature { signature[signature.count / 2] ^= 0x10 }
        if kind == .malformedBase64URL {
            // After signing: the signature covers the intact text, the reader never gets that far.
            payloadText.insert("*", at: payloadText.index(payloadText.startIndex, offsetBy: payloadText.count / 2))
        }
        return Self.base64url(header) + "." + payloadText + "." + Self.base64url(signature)
    }

    /// Compact JSON text with sorted keys. Only the factory's own dictionaries of strings, integers, doubles,
    /// booleans, arrays and nested dictionaries reach here; any other value is a programming error.
    static func json(_ object: [String: Any]) -> [UInt8] {
        func value(_ any: Any) -> JSONDocument {
            // Dynamic type checks, not `as?` casts, which may bridge an integer to a boolean through NSNumber.
            switch any {
            case let b as Bool where type(of: any) == Bool.self: return .bool(b)
            case let i as Int where type(of: any) == Int.self: return .int(i)
            case let i as Int64 where type(of: any) == Int64.self: return .integer(i)
            case let d as Double where type(of: any) == Double.self: return .double(d)
            case let s as String: return .string(s)
            case let a as [Any]: return .array(a.map(value))
            case let d as [String: Any]:
                var o = JSONObject()
                for (k, v) in d { o[k] = value(v) }
                return .object(o)
            default: preconditionFailure("JWSFactory.json: \(type(of: any)) is not a JSON value")
            }
        }
        return value(object).rendered(sortingKeys: true)
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        var s = Data(bytes).base64EncodedString()
        s = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while s.hasSuffix("=") { s.removeLast() }
        return s
    }
}
