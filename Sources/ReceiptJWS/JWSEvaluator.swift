import Foundation
import ReceiptModel
import ReceiptVerify

/// The outcome for one JWS: its status and error (nil when valid), what it decoded to, and the JWS nested in it.
public struct JWSVerdict: @unchecked Sendable {
    public var status: ReceiptStatus = .valid
    public var code: ErrorCode?
    public var detail: String?
    /// The signature and chain were checked and passed (with `JWSEvaluator.trust` empty, before the run's
    /// policies judged `trust`: only that the signature matched).
    public var verified = false
    /// What the trust policies judge of this JWS (its chain and signing time), when verification got that far.
    public var trust: TrustFacts?
    public var kind: JWSKind = .other
    /// The decoded header's `alg` and the leaf certificate's SHA-256, when the JWS got that far.
    public var alg: String?
    public var leafSHA256: String?
    /// The decoded payload, when it could be read (also for a JWS whose signature failed).
    public var fields: JWSFields?
    /// JWS carried inside this one's payload (a notification's `signedTransactionInfo` and `signedRenewalInfo`),
    /// by the key that held them, each judged on its own.
    public var nested: [(key: String, verdict: JWSVerdict)] = []

    public init() {}

    /// Rejects the JWS with `code` (and that code's status), unless an earlier check already did.
    public mutating func reject(_ code: ErrorCode, _ detail: String) {
        reject(code, code.status, detail)
    }

    /// Rejects the JWS with `code` and `status` (a policy's, such as 21007), unless an earlier check already did.
    public mutating func reject(_ code: ErrorCode, _ status: ReceiptStatus, _ detail: String) {
        guard self.code == nil else { return }
        self.code = code
        self.detail = detail
        self.status = status
        verified = false
    }
}

/// Reads and judges JWS strings: decode, verify at the payload's own signing date (`JWSFields.signingDate`: its
/// `signedDate`, else an app transaction's `receiptCreationDate`) unless verification is off,
/// then the nested JWS of a notification, each on its own.
public struct JWSEvaluator: Sendable {
    /// nil: decode only (`--no-verify`).
    public let verifier: JWSVerifier?
    /// Headers decoded once per distinct text, shared by every thread of a run.
    public let headers: JWSHeaderCache
    /// The trust policies applied here to what the verifier established; empty when the caller's own policy list
    /// judges `JWSVerdict.trust` (as `export` does, with the list receipts go through).
    public let trust: [any TrustPolicy]

    public init(
        verifier: JWSVerifier?, headers: JWSHeaderCache = JWSHeaderCache(),
        trust: [any TrustPolicy] = TrustPolicies.standard
    ) {
        self.verifier = verifier
        self.headers = headers
        self.trust = trust
    }

    /// Keys of a notification's `data` whose values are JWS of their own.
    static let nestedKeys = ["signedTransactionInfo", "signedRenewalInfo"]

    /// The verdict on `text`, a compact JWS.
    public func evaluate(_ text: Substring, nestingAllowed: Bool = true) -> JWSVerdict {
        var copy = String(text)
        return copy.withUTF8 { evaluate(UnsafeRawBufferPointer($0), nestingAllowed: nestingAllowed) }
    }

    /// The verdict on `text`, a compact JWS (read in place when the string is contiguous UTF-8, as decoded input is).
    public func evaluate(_ text: String, nestingAllowed: Bool = true) -> JWSVerdict {
        var text = text
        return text.withUTF8 { evaluate(UnsafeRawBufferPointer($0), nestingAllowed: nestingAllowed) }
    }

    /// The verdict on `text`, the bytes of a compact JWS.
    public func evaluate(_ text: UnsafeRawBufferPointer, nestingAllowed: Bool = true) -> JWSVerdict {
        var verdict = JWSVerdict()
        let jws: CompactJWS
        do throws(JWSError) {
            jws = try CompactJWS.parse(text, headers: headers)
        } catch {
            verdict.reject(error.code, error.detail)
            return verdict
        }
        verdict.alg = jws.header.alg
        let object: [String: PayloadValue]
        do throws(PayloadJSONError) {
            object = try PayloadJSON.parseObject(jws.payload)
        } catch {
            verdict.reject(.jwsMalformed, "the JWS payload is not a JSON object: it \(error.sentence)")
            return verdict
        }
        let fields = JWSFields(object)
        verdict.fields = fields
        verdict.kind = JWSKind.of(object)
        if let verifier {
            check(jws, UnsafeRawBufferPointer(rebasing: text[0..<jws.signingInputCount]), fields, verifier, &verdict)
        }
        if nestingAllowed, verdict.kind == .notification, let data = fields.object("data") {
            for key in Self.nestedKeys {
                guard let inner = data.string(key) else { continue }
                // A notification's nested JWS hold no further JWS.
                verdict.nested.append((key, evaluate(inner, nestingAllowed: false)))
            }
        }
        return verdict
    }

    private func check(
        _ jws: CompactJWS, _ signingInput: UnsafeRawBufferPointer, _ fields: JWSFields, _ verifier: JWSVerifier,
        _ verdict: inout JWSVerdict
    ) {
        guard jws.header.alg == "ES256" else {
            verdict.reject(
                .unsupportedAlgorithm,
                "the JWS alg is '\(jws.header.alg)'; Apple signs with ES256 and nothing else is accepted")
            return
        }
        guard let signedDate = fields.signingDate(verdict.kind) else {
            verdict.reject(
                .jwsMalformed,
                verdict.kind == .appTransaction
                    ? "the app transaction has neither signedDate nor receiptCreationDate to judge its certificates at"
                    : "the JWS payload has no signedDate to judge its certificates at")
            return
        }
        let check = verifier.establish(
            signingInput: signingInput, signature: jws.signature, chain: jws.header.chain, at: signedDate)
        verdict.leafSHA256 = check.leafSHA256
        verdict.trust = check.trust
        if let code = check.code {
            verdict.reject(code, check.detail ?? code.rawValue)
            return
        }
        verdict.verified = check.signatureVerified
        guard let facts = check.trust, !trust.isEmpty else { return }
        if let failure = trust.judge(facts) {
            verdict.reject(failure.code, failure.sentence(facts))
        } else if !check.signatureVerified {
            verdict.reject(.untrustedChain, "the signature was not checked")
        }
    }
}
