import Foundation
import ReceiptModel
import ReceiptVerify

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
/// payload, and a signature (empty only for an unsecured JWS, whose `alg` the verifier rejects).
public struct CompactJWS: Sendable {
    /// Bytes of the input the signature covers, from its start: `BASE64URL(header) "." BASE64URL(payload)`.
    public let signingInputCount: Int
    public let header: JWSHeader
    /// The decoded payload: a JSON object's UTF-8 text.
    public let payload: [UInt8]
    /// The decoded signature (raw `r || s` for ES256).
    public let signature: [UInt8]

    /// Longest JWS accepted; Apple's largest (a notification with two nested JWS) is about 20 KB.
    public static let maximumLength = 1 << 20

    /// Splits and decodes `text`, a compact JWS; `headers` reuses the decoded header of a header seen before.
    public static func parse(_ text: UnsafeRawBufferPointer, headers: JWSHeaderCache? = nil) throws(JWSError)
        -> CompactJWS
    {
        guard text.count <= maximumLength else {
            throw JWSError(.jwsMalformed, "the JWS is longer than \(maximumLength) bytes")
        }
        let dots = Self.dots(text)
        guard dots.count == 2 else {
            throw JWSError(
                .jwsMalformed,
                "a compact JWS has three parts separated by two dots; this one has \(dots.count > 2 ? "more" : "fewer")"
            )
        }
        let headerText = UnsafeRawBufferPointer(rebasing: text[0..<dots.first])
        let payloadText = UnsafeRawBufferPointer(rebasing: text[(dots.first + 1)..<dots.second])
        let signatureText = UnsafeRawBufferPointer(rebasing: text[(dots.second + 1)...])
        let header: JWSHeader
        if let headers {
            header = try headers.header(headerText)
        } else {
            header = try JWSHeader(base64url: headerText)
        }
        guard let payload = Base64URL.decode(payloadText) else {
            throw JWSError(.jwsMalformed, "the JWS payload is not base64url")
        }
        // An empty signature is well-formed (an unsecured JWS, alg "none"): the verifier rejects its alg.
        guard let signature = signatureText.isEmpty ? [] : Base64URL.decode(signatureText) else {
            throw JWSError(.jwsMalformed, "the JWS signature is not base64url")
        }
        return CompactJWS(signingInputCount: dots.second, header: header, payload: payload, signature: signature)
    }

    /// How many dots `text` holds (counting stops at 3) and the offsets of the first two; memchr, since a JWS is
    /// kilobytes long and holds two.
    private static func dots(_ text: UnsafeRawBufferPointer) -> (count: Int, first: Int, second: Int) {
        guard let base = text.baseAddress else { return (0, 0, 0) }
        func next(after start: Int) -> Int? {
            guard start < text.count, let hit = memchr(base + start, Int32(UInt8(ascii: ".")), text.count - start)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
        guard let first = next(after: 0) else { return (0, 0, 0) }
        guard let second = next(after: first + 1) else { return (1, first, 0) }
        return (next(after: second + 1) == nil ? 2 : 3, first, second)
    }
}

/// The protected header of an Apple JWS.
public struct JWSHeader: Sendable {
    /// The `alg` value as written (the verifier accepts only `ES256`).
    public let alg: String
    /// The certificates of `x5c`, leaf first.
    public let chain: JWSCertificateChain

    /// Decodes a header from its base64url text.
    init(base64url text: UnsafeRawBufferPointer) throws(JWSError) {
        guard let json = Base64URL.decode(text) else {
            throw JWSError(.jwsMalformed, "the JWS header is not base64url")
        }
        guard let object = JSONObjectText.parse(json) else {
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
        var certificates: [[UInt8]] = []
        for (i, element) in (object["x5c"] as? [Any] ?? []).enumerated() {
            // x5c entries are standard base64 (RFC 7515 section 4.1.6), not base64url.
            guard let s = element as? String, let data = Data(base64Encoded: s) else {
                throw JWSError(.jwsMalformed, "x5c[\(i)] is not a base64 string")
            }
            certificates.append([UInt8](data))
        }
        chain = JWSCertificateChain(certificates)
    }
}

/// Decoded headers by their exact base64url text: Apple signs every JWS of one leaf certificate under the same
/// header, so a run decodes each distinct header once. Bounded (see `BytesKeyedCache`).
///
/// The header a lookup found last is kept aside and compared first (one memcmp): a stream of JWS from one leaf
/// then skips hashing kilobytes of header text per JWS.
public final class JWSHeaderCache: @unchecked Sendable {
    private let cache: BytesKeyedCache<Result<JWSHeader, JWSError>>
    private let lock = NSLock()
    /// Guarded by `lock`: the text and outcome of the last header looked up.
    private var lastText: [UInt8] = []
    private var last: Result<JWSHeader, JWSError>? = nil

    public init(capacity: Int = 1024) {
        cache = BytesKeyedCache(capacity: capacity)
    }

    func header(_ text: UnsafeRawBufferPointer) throws(JWSError) -> JWSHeader {
        if let hit = recent(text) { return try hit.get() }
        let found = cache.value(for: text) { () -> Result<JWSHeader, JWSError> in
            do throws(JWSError) {
                return .success(try JWSHeader(base64url: text))
            } catch {
                return .failure(error)
            }
        }
        lock.lock()
        lastText = [UInt8](text)
        last = found
        lock.unlock()
        return try found.get()
    }

    private func recent(_ text: UnsafeRawBufferPointer) -> Result<JWSHeader, JWSError>? {
        lock.lock()
        defer { lock.unlock() }
        guard let last, lastText.count == text.count, let base = text.baseAddress else { return nil }
        let same = lastText.withUnsafeBytes { memcmp($0.baseAddress!, base, text.count) == 0 }
        return same ? last : nil
    }
}

/// JSON objects read through Foundation's parser (named apart from ReceiptModel's `JSONObject`, which the fuzz
/// builds compile in the same module).
enum JSONObjectText {
    static func parse(_ bytes: [UInt8]) -> [String: Any]? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: []) else { return nil }
        return value as? [String: Any]
    }
}
