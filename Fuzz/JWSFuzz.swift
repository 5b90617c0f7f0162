// libFuzzer entry for the JWS reader and verifier (built by scripts/fuzz.sh, not by SwiftPM).
// Every input must end in a verdict, never a crash: the compact split, base64url, the JSON header and payload,
// the x5c certificates and the ES256 check all see hostile bytes. A verdict is valid only with a passed
// signature check; rejected inputs carry a code of the 21002 or 21003 family.

import Foundation

/// Apple's built-in roots as the anchors, as `export` uses them by default.
let evaluator: JWSEvaluator = {
    guard let anchors = try? TrustAnchors.apple() else { return JWSEvaluator(verifier: nil) }
    return JWSEvaluator(verifier: JWSVerifier(anchors: anchors, capacity: 64))
}()
let decodeOnly = JWSEvaluator(verifier: nil)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for e in [evaluator, decodeOnly] {
        let v = e.evaluate(Substring(text))
        precondition((v.code == nil) == (v.status == .valid), "a verdict's status and code disagree")
        precondition(!v.verified || v.code == nil, "a rejected JWS reads as verified")
        precondition(e.verifier != nil || !v.verified, "decode-only verified something")
        for (_, inner) in v.nested {
            precondition(inner.nested.isEmpty, "a nested JWS holds further JWS")
        }
    }
    return 0
}
