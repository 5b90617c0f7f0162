import ReceiptJWS
import ReceiptModel

/// The judging step of a JWS, after `JWSEvaluator` decoded and verified it: the environment and bundle id it is
/// judged by (its own, else those of the notification that carried it), then the run's policies, the same list and
/// `Verdict` receipts go through, in the same judging step (`judge` on the policy list: the policies, then the
/// fail-closed rule). A JWS that verification rejected keeps that verdict.
struct JWSJudge {
    let policies: [any RecordPolicy]

    /// A judged JWS: its verdict, and the environment and bundle id its rows carry.
    struct Judged {
        var verdict: JWSVerdict
        var environment: String?
        var bundle: String?
    }

    /// Judges `verdict`; `inherited` is the data of the notification a nested JWS came in (nil for a JWS of its
    /// own).
    func judge(_ verdict: JWSVerdict, inherited: JWSFields?) -> Judged {
        let f = verdict.fields
        var judged = Judged(
            verdict: verdict, environment: Self.environment(f) ?? inherited?.string("environment"),
            bundle: Self.bundleID(f) ?? inherited?.string("bundleId"))
        if verdict.code == nil { applyPolicies(&judged) }
        return judged
    }

    private func applyPolicies(_ j: inout Judged) {
        let app = j.verdict.kind == .appTransaction
        let version = app ? j.verdict.fields?.string("applicationVersion") : nil
        var verdict = Verdict()
        Self.withBytes(j.bundle) { bundle in
            Self.withBytes(version) { version in
                let input = PolicyInput(
                    jwsEnvironment: RecordEnvironment(j.environment), bundleID: bundle, describesApp: app,
                    applicationVersion: version, trust: j.verdict.trust)
                policies.judge(
                    input, verifying: j.verdict.trust != nil, signatureVerified: j.verdict.verified, &verdict)
            }
        }
        if let code = verdict.code {
            j.verdict.reject(code, verdict.status, verdict.detail.text(code: code) ?? code.rawValue)
        }
    }

    /// Calls `body` with the UTF-8 bytes of `s`, or nil when `s` is nil.
    private static func withBytes<R>(_ s: String?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard var s else { return body(nil) }
        return s.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    /// The environment a payload names: `environment` (transactions, renewals), a notification's
    /// `data.environment`, or an app transaction's `receiptType`.
    static func environment(_ f: JWSFields?) -> String? {
        guard let f else { return nil }
        return f.string("environment") ?? f.object("data")?.string("environment") ?? f.string("receiptType")
    }

    /// The bundle id a payload names: `bundleId`, or a notification's `data.bundleId`.
    static func bundleID(_ f: JWSFields?) -> String? {
        guard let f else { return nil }
        return f.string("bundleId") ?? f.object("data")?.string("bundleId")
    }
}
