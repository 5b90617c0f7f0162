import Foundation
import ReceiptJWS
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
    /// nested JWS are valid.
    static func report(_ jws: String, anchors: TrustAnchors?, pretty: Bool) -> (text: [UInt8], valid: Bool) {
        let evaluator = JWSEvaluator(verifier: anchors.map { JWSVerifier(anchors: $0) })
        let verdict = evaluator.evaluate(Substring(jws))
        var object = describe(verdict, checked: anchors != nil)
        object["input_encoding"] = "jws"
        if let anchors { object["trust_anchors"] = anchors.anchors.map(\.sha256) }
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { options.insert(.prettyPrinted) }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: options)) ?? Data("{}".utf8)
        let valid = verdict.status == .valid && verdict.nested.allSatisfy { $0.verdict.status == .valid }
        return ([UInt8](data), valid)
    }

    private static func describe(_ v: JWSVerdict, checked: Bool) -> [String: Any] {
        var o: [String: Any] = [
            "status": Int(v.status.rawValue), "kind": v.kind.rawValue, "verified": v.verified,
            "verification_checked": checked,
        ]
        o["error"] = v.code?.rawValue ?? NSNull()
        o["error_detail"] = v.detail ?? NSNull()
        o["alg"] = v.alg ?? NSNull()
        o["leaf_sha256"] = v.leafSHA256 ?? NSNull()
        o["payload"] = v.fields?.object ?? NSNull()
        if !v.nested.isEmpty {
            o["nested"] = v.nested.map { entry -> [String: Any] in
                var n = describe(entry.verdict, checked: checked)
                n["key"] = entry.key
                return n
            }
        }
        return o
    }
}
