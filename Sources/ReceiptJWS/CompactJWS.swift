import Foundation
import ReceiptModel

/// Why a JWS could not be read or did not verify: a stable code and one human sentence.
public struct JWSError: Error, Sendable, Equatable {
    public var code: ErrorCode
    public var detail: String

    public init(_ code: ErrorCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }
}

/// A compact-serialised JWS (RFC 7515 section 7.1) split into its decoded parts.
///
/// Only what Apple signs is accepted: a JSON header with `alg` and an `x5c` certificate chain, a JSON object
/// payload, and a non-empty signature. `alg` is read here and judged by the verifier.
public struct CompactJWS: Sendable {
    /// The ASCII bytes the signature covers: `BASE64URL(header) "." BASE64URL(payload)`.
    public let signingInput: [UInt8]
    public let header: JWSHeader
    /// The decoded payload: a JSON object's UTF-8 text.
    public let payload: [UInt8]
    /// The decoded signature (raw `r || s` for ES256).
    public let signature: [UInt8]

    /// Longest JWS accepted; Apple's largest (a notification with two nested JWS) is about 20 KB.
    public static let maximumLength = 1 << 20

    /// Splits and decodes `text`, a compact JWS.
    public static func parse(_ text: Substring) throws(JWSError) -> CompactJWS {
        let bytes = text.utf8
        guard bytes.count <= maximumLength else {
            throw JWSError(.jwsMalformed, "the JWS is longer than \(maximumLength) bytes")
        }
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else {
            throw JWSError(
                .jwsMalformed, "a compact JWS has three parts separated by two dots; this one has \(dots.count) dots")
        }
        let headerText = text[text.startIndex..<dots[0]]
        let payloadText = text[text.index(after: dots[0])..<dots[1]]
        let signatureText = text[text.index(after: dots[1])...]
        guard let headerBytes = Base64URL.decode(headerText.utf8) else {
            throw JWSError(.jwsMalformed, "the JWS header is not base64url")
        }
        guard let payload = Base64URL.decode(payloadText.utf8) else {
            throw JWSError(.jwsMalformed, "the JWS payload is not base64url")
        }
        // An empty signature is well-formed (an unsecured JWS, alg "none"): the verifier rejects its alg.
        guard let signature = signatureText.isEmpty ? [] : Base64URL.decode(signatureText.utf8) else {
            throw JWSError(.jwsMalformed, "the JWS signature is not base64url")
        }
        let header = try JWSHeader(json: headerBytes)
        return CompactJWS(
            signingInput: Array(text[text.startIndex..<dots[1]].utf8), header: header, payload: payload,
            signature: signature)
    }
}

/// The protected header of an Apple JWS.
public struct JWSHeader: Sendable, Equatable {
    /// The `alg` value as written (the verifier accepts only `ES256`).
    public let alg: String
    /// The DER certificates of `x5c`, leaf first.
    public let x5c: [[UInt8]]

    init(json: [UInt8]) throws(JWSError) {
        guard let object = JSONObject.parse(json) else {
            throw JWSError(.jwsMalformed, "the JWS header is not a JSON object")
        }
        guard let alg = object["alg"] as? String else {
            throw JWSError(.jwsMalformed, "the JWS header has no alg")
        }
        // A critical extension this reader does not know must not be ignored (RFC 7515 section 4.1.11).
        if object["crit"] != nil {
            throw JWSError(.jwsMalformed, "the JWS header names critical extensions (crit), which are not supported")
        }
        self.alg = alg
        guard let chain = object["x5c"] as? [Any], !chain.isEmpty else {
            x5c = []
            return
        }
        var certificates: [[UInt8]] = []
        for (i, element) in chain.enumerated() {
            // x5c entries are standard base64 (RFC 7515 section 4.1.6), not base64url.
            guard let s = element as? String, let data = Data(base64Encoded: s) else {
                throw JWSError(.jwsMalformed, "x5c[\(i)] is not a base64 string")
            }
            certificates.append([UInt8](data))
        }
        x5c = certificates
    }
}

/// JSON objects through Foundation's parser.
enum JSONObject {
    static func parse(_ bytes: [UInt8]) -> [String: Any]? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: []) else { return nil }
        return value as? [String: Any]
    }
}
