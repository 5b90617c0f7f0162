import Foundation
import ReceiptJWS
import ReceiptModel
import ReceiptPipeline
import ReceiptVerify

/// `inspect` of a JWS (a compact JWS, or a notification body `{"signedPayload": ...}`): the verdict, the decoded
/// header facts and payload, and each nested JWS of a notification judged on its own.
enum InspectJWS {
    /// The compact JWS `input` holds, when it is one (surrounding whitespace ignored) or a notification body.
    static func compact(_ input: [UInt8]) -> String? {
        let text = String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("eyJ"), text.contains(".") { return text }
        guard text.hasPrefix("{"),
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let payload = object["signedPayload"] as? String
        else { return nil }
        return payload
    }

    /// The report of `jws`, verified against `anchors` unless nil (`--no-verify`), and whether it and every
    /// nested JWS are valid. Keys are sorted; `pretty` indents as the receipt report does.
    static func report(_ jws: String, anchors: TrustAnchors?, pretty: Bool) -> (text: [UInt8], valid: Bool) {
        let evaluator = JWSEvaluator(verifier: anchors.map { JWSVerifier(anchors: $0) })
        let verdict = evaluator.evaluate(Substring(jws))
        var object = describe(verdict, checked: anchors != nil)
        object["input_encoding"] = "jws"
        if let anchors { object["trust_anchors"] = .strings(anchors.anchors.map(\.sha256)) }
        let text = JSONDocument.object(object).rendered(layout: pretty ? .indented : .compact, sortingKeys: true)
        let valid = verdict.status == .valid && verdict.nested.allSatisfy { $0.verdict.status == .valid }
        return (text, valid)
    }

    private static func describe(_ v: JWSVerdict, checked: Bool) -> JSONObject {
        var o = JSONObject([
            "status": .int(Int(v.status.rawValue)), "kind": .string(v.kind.rawValue), "verified": .bool(v.verified),
            "verification_checked": .bool(checked),
        ])
        o["error"] = .string(v.code?.rawValue)
        o["error_detail"] = .string(v.detail)
        o["alg"] = .string(v.alg)
        o["leaf_sha256"] = .string(v.leafSHA256)
        o["payload"] = v.fields?.jsonDocument ?? .null
        if !v.nested.isEmpty {
            o["nested"] = .array(
                v.nested.map { entry in
                    var n = describe(entry.verdict, checked: checked)
                    n["key"] = .string(entry.key)
                    return .object(n)
                })
        }
        return o
    }
}
