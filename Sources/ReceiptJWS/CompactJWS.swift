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
        let object: [String: PayloadValue]
        do throws(PayloadJSONError) {
            object = try PayloadJSON.parseObject(json)
        } catch {
            throw JWSError(.jwsMalformed, "the JWS header is not a JSON object: it \(error.sentence)")
        }
        guard case .string(let alg)? = object["alg"] else {
            throw JWSError(.jwsMalformed, "the JWS header has no alg")
        }
        // A critical extension this reader does not know must not be ignored (RFC 7515 section 4.1.11).
        if object["crit"] != nil {
            throw JWSError(.jwsMalformed, "the JWS header names critical extensions (crit), which are not supported")
        }
        self.alg = alg
        var certificates: [[UInt8]] = []
        var elements: [PayloadValue] = []
        if case .array(let a)? = object["x5c"] { elements = a }
        for (i, element) in elements.enumerated() {
            // x5c entries are standard base64 (RFC 7515 section 4.1.6), not base64url.
            guard case .string(let s) = element, let data = Data(base64Encoded: s) else {
                throw JWSError(.jwsMalformed, "x5c[\(i)] is not a base64 string")
            }
            certificates.append([UInt8](data))
        }
        chain = JWSCertificateChain(certificates)
    }
}

/// Decoded headers by their exact base64url text: Apple signs every JWS of one leaf certificate under the same
/// header, so a run decodes each distinct header once.
///
/// The headers are a `DigestKeyedCache` keyed by the SHA-256 of the text (by OpenSSL): sharded, bounded (the
/// oldest header evicted first), and a header is decoded with no lock held, so one new or hostile header never
/// makes other threads wait. A hit is also compared byte for byte with the text it was stored for. The header a
/// lookup found last is kept aside and compared first (one memcmp): a stream of JWS from one leaf then skips
/// hashing kilobytes of header text per JWS.
public final class JWSHeaderCache: @unchecked Sendable {
    /// One header text and what it decoded to; immutable, so threads read it without a lock.
    private final class Entry: @unchecked Sendable {
        let text: [UInt8]
        let decoded: Result<JWSHeader, JWSError>

        init(text: [UInt8], decoded: Result<JWSHeader, JWSError>) {
            self.text = text
            self.decoded = decoded
        }

        func holds(_ other: UnsafeRawBufferPointer) -> Bool {
            guard text.count == other.count else { return false }
            guard let base = other.baseAddress else { return true }
            return text.withUnsafeBytes { memcmp($0.baseAddress!, base, other.count) == 0 }
        }
    }

    private let cache: DigestKeyedCache<Entry>
    private let lock = Lock()
    /// Guarded by `lock`: the entry of the last header looked up.
    private var last: Entry? = nil

    /// - Parameter capacity: the most distinct headers held.
    public init(capacity: Int = 1024) {
        cache = DigestKeyedCache(capacity: capacity, shards: capacity >= 256 ? 16 : 1)
    }

    /// Distinct headers held.
    public var count: Int { cache.count }

    func header(_ text: UnsafeRawBufferPointer) throws(JWSError) -> JWSHeader {
        if let recent = lock.withLock({ last }), recent.holds(text) { return try recent.decoded.get() }
        let key = ContentHasher.sha256(text)
        let entry: Entry
        if let held = cache.value(for: key), held.holds(text) {
            entry = held
        } else {
            let decoded: Result<JWSHeader, JWSError>
            do throws(JWSError) {
                decoded = .success(try JWSHeader(base64url: text))
            } catch {
                decoded = .failure(error)
            }
            entry = cache.insert(Entry(text: [UInt8](text), decoded: decoded), for: key)
        }
        lock.withLock { last = entry }
        // `insert` returns the entry another thread stored first under this key: the same text, decoded alike.
        guard entry.holds(text) else { return try JWSHeader(base64url: text) }
        return try entry.decoded.get()
    }
}
