import Foundation
import ReceiptModel
import ReceiptTestSupport
import ReceiptVerify
import Testing

@testable import ReceiptJWS

/// The real Apple-signed JWS samples: each verifies against Apple Root CA - G3 at its signedDate and decodes to
/// exactly the payload recorded beside it; tampered copies are rejected with the right code.
struct JWSEvaluatorTests {
    static var jwsDir: URL { Fixtures.jwsDir }
    static var g3Path: String { Fixtures.certsDir.appendingPathComponent("AppleRootCA-G3.cer").path }
    static var appleIncPath: String { Fixtures.certsDir.appendingPathComponent("AppleIncRootCertificate.cer").path }

    static func names() -> [String] {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: jwsDir.path)) ?? []
        return all.filter { $0.hasSuffix(".jws") }.map { String($0.dropLast(4)) }.sorted()
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOf: jwsDir.appendingPathComponent(name + ".jws"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func expected(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: jwsDir.appendingPathComponent(name + ".expected.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func evaluator(_ anchors: [String] = [g3Path]) throws -> JWSEvaluator {
        JWSEvaluator(verifier: JWSVerifier(anchors: try TrustAnchors(paths: anchors)))
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// JSON text with sorted keys: equal objects give equal bytes (NSDictionary equality on Linux does not hold
    /// for boolean values).
    static func canonical(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    static func canonical(_ object: [String: PayloadValue]) throws -> Data {
        try canonical(PayloadJSONTests.foundation(object))
    }

    static func decode(_ segment: String) -> [UInt8]? {
        var s = segment
        return s.withUTF8 { Base64URL.decode(UnsafeRawBufferPointer($0)) }
    }

    static func segments(_ jws: String) -> [String] {
        jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func theSampleSetHoldsEveryKind() {
        let names = Self.names()
        #expect(names.count == 8)
        #expect(names.contains { $0.hasPrefix("notification_") })
        #expect(names.contains { $0.hasPrefix("transaction_") })
        #expect(names.contains { $0.hasPrefix("renewal_") })
    }

    @Test(arguments: names())
    func realSampleVerifiesAndDecodesToItsPayload(name: String) throws {
        let expected = try Self.expected(name)
        let verdict = try Self.evaluator().evaluate(Substring(try Self.text(name)))
        #expect(verdict.code == nil, "\(name): \(verdict.detail ?? "")")
        #expect(verdict.verified)
        #expect(verdict.status == .valid)
        #expect(verdict.alg == "ES256")
        let payload = try #require(expected["payload"] as? [String: Any])
        let fields = try #require(verdict.fields)
        #expect(try Self.canonical(fields.object) == Self.canonical(payload))
        #expect(fields.signedDate == (expected["signedDate"] as? NSNumber)?.int64Value)
        let leaf = ((expected["header_summary"] as? [String: Any])?["x5c"] as? [[String: Any]])?.first
        #expect(verdict.leafSHA256 == (leaf?["sha256"] as? String)?.lowercased())

        let kind = expected["kind"] as? String ?? ""
        let wantKind: JWSKind =
            kind.hasPrefix("notification")
            ? .notification : kind.hasPrefix("signedRenewalInfo") ? .renewal : .transaction
        #expect(verdict.kind == wantKind)

        // A notification's nested JWS are judged on their own and decode to their recorded payloads.
        let nested = expected["nested"] as? [String: Any] ?? [:]
        #expect(verdict.nested.count == nested.count)
        for (key, inner) in verdict.nested {
            let want = try #require(nested[key] as? [String: Any], "\(key) not recorded")
            #expect(inner.verified, "\(name).\(key): \(inner.detail ?? "")")
            let innerPayload = try #require(want["payload"] as? [String: Any])
            #expect(try Self.canonical(inner.fields?.object ?? [:]) == Self.canonical(innerPayload), "\(name).\(key)")
        }
    }

    @Test func aChangedPayloadFailsTheSignature() throws {
        let jws = try Self.text("transaction_sandbox_2024_lovepush")
        let parts = Self.segments(jws)
        let payload = try #require(Self.decode(parts[1]))
        var text = try #require(String(bytes: payload, encoding: .utf8))
        text = text.replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":9")
        #expect(text.utf8.count == payload.count && !text.utf8.elementsEqual(payload))
        let forged = [parts[0], Self.base64url(Array(text.utf8)), parts[2]].joined(separator: ".")
        let verdict = try Self.evaluator().evaluate(Substring(forged))
        #expect(verdict.code == .badSignature)
        #expect(verdict.status == .notAuthenticated)
        #expect(!verdict.verified)
        // What was decoded is still shown.
        #expect(verdict.fields?.int64("quantity") == 9)
    }

    @Test func aFlippedSignatureBitFails() throws {
        let jws = try Self.text("renewal_sandbox_2023_ringalarm")
        let parts = Self.segments(jws)
        var signature = try #require(Self.decode(parts[2]))
        signature[40] ^= 0x01
        let forged = [parts[0], parts[1], Self.base64url(signature)].joined(separator: ".")
        #expect(try Self.evaluator().evaluate(Substring(forged)).code == .badSignature)
    }

    /// Header variants built from a real sample's own x5c.
    static func withHeader(_ name: String, _ edit: (inout [String: Any]) -> Void) throws -> String {
        let parts = segments(try text(name))
        let bytes = try #require(decode(parts[0]))
        var header = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        edit(&header)
        let data = try JSONSerialization.data(withJSONObject: header)
        return [base64url([UInt8](data)), parts[1], parts[2]].joined(separator: ".")
    }

    @Test(arguments: ["none", "HS256", "RS256", "ES384", "es256"])
    func anyAlgOtherThanES256IsRejected(alg: String) throws {
        let jws = try Self.withHeader("transaction_sandbox_2024_lovepush") { $0["alg"] = alg }
        let verdict = try Self.evaluator().evaluate(Substring(jws))
        #expect(verdict.code == .unsupportedAlgorithm)
        #expect(verdict.status == .notAuthenticated)
    }

    @Test func aTruncatedChainIsRejected() throws {
        let jws = try Self.withHeader("transaction_sandbox_2024_lovepush") { h in
            h["x5c"] = Array((h["x5c"] as? [Any] ?? []).prefix(2))
        }
        #expect(try Self.evaluator().evaluate(Substring(jws)).code == .untrustedChain)
    }

    @Test func aChainToAnotherRootIsRejected() throws {
        let verdict = try Self.evaluator([Self.appleIncPath]).evaluate(
            Substring(try Self.text("transaction_sandbox_2024_lovepush")))
        #expect(verdict.code == .untrustedChain)
    }

    @Test func certificatesAreJudgedAtTheGivenTime() throws {
        var text = try Self.text("transaction_sandbox_2024_lovepush")
        let verifier = JWSVerifier(anchors: try TrustAnchors(paths: [Self.g3Path]))
        func at(_ iso: String) throws -> JWSCheck {
            let t = Int64(ISO8601DateFormatter().date(from: iso)!.timeIntervalSince1970 * 1000)
            return try text.withUTF8 { buf throws -> JWSCheck in
                let bytes = UnsafeRawBufferPointer(buf)
                let jws = try CompactJWS.parse(bytes)
                return verifier.verify(
                    signingInput: UnsafeRawBufferPointer(rebasing: bytes[0..<jws.signingInputCount]),
                    signature: jws.signature, chain: jws.header.chain, at: t)
            }
        }
        // The leaf is valid 2023-09-12 to 2025-10-11.
        #expect(try at("2024-12-26T04:46:49Z").passed)
        #expect(try at("2026-01-01T00:00:00Z").code == .certificateExpired)
        #expect(try at("2023-01-01T00:00:00Z").code == .certificateNotYetValid)
        #expect(verifier.cachedChains == 1)
    }

    @Test(arguments: [
        "", "abc", "a.b", "a.b.c.d", "eyJ.eyJ.", "eyJhbGciOiJub25lIn0.e30.!", "!!!.eyJhIjoxfQ.AAAA",
        "eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.AAAA",
    ])
    func malformedJWSGetsItsCode(text: String) throws {
        let verdict = try Self.evaluator().evaluate(Substring(text))
        #expect(verdict.code == .jwsMalformed)
        #expect(verdict.status == .malformed)
    }

    @Test func decodeOnlyReadsWithoutVerifying() throws {
        let verdict = JWSEvaluator(verifier: nil).evaluate(Substring(try Self.text("notification_test_2022")))
        #expect(verdict.code == nil)
        #expect(!verdict.verified)
        #expect(verdict.kind == .notification)
    }
}
