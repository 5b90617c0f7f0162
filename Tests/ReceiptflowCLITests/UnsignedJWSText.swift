import Foundation

/// Generated text with every compact JWS replaced by what it signs: the decoded header (or a placeholder) and the
/// decoded payload, nested JWS likewise, without the signature. ECDSA signatures are randomized, so two runs of
/// `generate` with the same seed differ only in what this removes.
enum UnsignedJWSText {
    /// `text` with each JWS as `JWS(header|payload)`: the header's JSON when `headers`, else `-` (the x5c
    /// certificates of two fresh test PKIs are other bytes over the same keys); the payload's JSON made unsigned
    /// in turn, or its text as written when it does not decode.
    static func of(_ text: String, headers: Bool = true) -> String {
        var out = ""
        var rest = Substring(text)
        while let start = rest.range(of: "eyJ") {
            out += rest[..<start.lowerBound]
            guard let parts = compact(rest[start.lowerBound...]) else {
                out += "eyJ"
                rest = rest[start.upperBound...]
                continue
            }
            let header = headers ? (decoded(parts.header) ?? String(parts.header)) : "-"
            let payload = decoded(parts.payload).map { of($0, headers: headers) } ?? String(parts.payload)
            out += "JWS(\(header)|\(payload))"
            rest = rest[parts.end...]
        }
        return out + rest
    }

    /// The compact JWS at the start of `s` as the generator writes it (three base64url runs joined by dots; the
    /// payload may hold the `*` of a malformed-base64url one): its header and payload, and where it ends.
    static func compact(_ s: Substring) -> (header: Substring, payload: Substring, end: Substring.Index)? {
        func run(from i: Substring.Index, star: Bool) -> Substring.Index {
            var j = i
            while j < s.endIndex, let a = s[j].asciiValue,
                a.isBase64URL || (star && a == UInt8(ascii: "*"))
            {
                j = s.index(after: j)
            }
            return j
        }
        let headerEnd = run(from: s.startIndex, star: false)
        guard headerEnd < s.endIndex, s[headerEnd] == "." else { return nil }
        let payloadStart = s.index(after: headerEnd)
        let payloadEnd = run(from: payloadStart, star: true)
        guard payloadEnd < s.endIndex, s[payloadEnd] == "." else { return nil }
        let end = run(from: s.index(after: payloadEnd), star: false)
        return (s[s.startIndex..<headerEnd], s[payloadStart..<payloadEnd], end)
    }

    /// The UTF-8 text `segment` encodes in base64url, or nil.
    static func decoded(_ segment: Substring) -> String? {
        var s = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        s += String(repeating: "=", count: (4 - s.count % 4) % 4)
        return Data(base64Encoded: s).flatMap { String(data: $0, encoding: .utf8) }
    }
}

extension UInt8 {
    /// A letter, digit, `-` or `_`.
    fileprivate var isBase64URL: Bool {
        (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || (0x30...0x39).contains(self) || self == 0x2D
            || self == 0x5F
    }
}
