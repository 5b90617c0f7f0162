import Foundation

/// Generated text with every compact JWS replaced by what it signs: the decoded header (or a placeholder) and the
/// decoded payload, nested JWS likewise, without the signature. ECDSA signatures are randomized, so two runs of
/// `generate` with the same seed differ only in what this removes.
enum UnsignedJWSText {
    /// A compact JWS as the generator writes it; the payload may hold the `*` of a malformed-base64url one.
    nonisolated(unsafe) static let compact = try! Regex("eyJ[A-Za-z0-9_-]*\\.[A-Za-z0-9_*-]*\\.[A-Za-z0-9_-]*")

    /// `text` with each JWS as `JWS(header|payload)`: the header's JSON when `headers`, else `-` (the x5c
    /// certificates of two fresh test PKIs are other bytes over the same keys); the payload's JSON made unsigned
    /// in turn, or its text as written when it does not decode.
    static func of(_ text: String, headers: Bool = true) -> String {
        text.replacing(compact) { match in
            let parts = match.output[0].substring!.split(separator: ".", omittingEmptySubsequences: false)
            let header = headers ? (decoded(parts[0]) ?? String(parts[0])) : "-"
            let payload = decoded(parts[1]).map { of($0, headers: headers) } ?? String(parts[1])
            return "JWS(\(header)|\(payload))"
        }
    }

    /// The UTF-8 text `segment` encodes in base64url, or nil.
    static func decoded(_ segment: Substring) -> String? {
        var s = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        s += String(repeating: "=", count: (4 - s.count % 4) % 4)
        return Data(base64Encoded: s).flatMap { String(data: $0, encoding: .utf8) }
    }
}
