import Foundation
import ReceiptJWS

/// The JWS an input line holds, in the order they appear, or why the line's JSON held none.
///
/// Three shapes are read (docs/jws.md): a compact JWS in the record field (or alone on a line), a notification
/// body (`{"signedPayload": "..."}`), and API pages (`{"signedTransactions": [...]}`, and Get All Subscription
/// Statuses' `data[].lastTransactions[].signedTransactionInfo` / `signedRenewalInfo`).
enum JWSLine {
    /// Keys whose presence makes a line without a receipt field a JWS body (checked on the raw bytes first, so
    /// that ordinary receipt lines never reach the JSON parser).
    static let bodyKeys: [[UInt8]] = ["\"signedPayload\"", "\"signedTransactions\"", "\"lastTransactions\""].map {
        Array($0.utf8)
    }

    /// True when `text` has the form of a compact JWS: it starts with `eyJ` (base64url of `{"`) and holds a dot.
    /// A base64 receipt (PKCS #7, starting `MII`) never does.
    static func looksLikeCompact(_ text: UnsafeRawBufferPointer) -> Bool {
        guard text.count >= 5, text[0] == UInt8(ascii: "e"), text[1] == UInt8(ascii: "y"),
            text[2] == UInt8(ascii: "J")
        else { return false }
        return text.contains(UInt8(ascii: "."))
    }

    /// `text` without surrounding whitespace, as a String.
    static func trimmed(_ text: UnsafeRawBufferPointer) -> String {
        String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// True when `line` (a JSON object without a receipt field) names one of the JWS body keys.
    static func looksLikeBody(_ line: UnsafeRawBufferPointer) -> Bool {
        bodyKeys.contains { key in contains(line, key) }
    }

    private static func contains(_ hay: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard hay.count >= needle.count, let first = needle.first else { return false }
        var i = 0
        let last = hay.count - needle.count
        while i <= last {
            if hay[i] == first {
                var k = 1
                while k < needle.count && hay[i + k] == needle[k] { k += 1 }
                if k == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    /// The JWS of a body line, each as its text or, when an element where a JWS belongs is not a string, nil.
    /// An empty result means the body held no JWS at all.
    static func extract(_ line: UnsafeRawBufferPointer) -> [String?] {
        guard let object = try? PayloadJSON.parseObject(line) else { return [nil] }
        var out: [String?] = []
        if let payload = object["signedPayload"] {
            out.append(text(payload))
        }
        if let page = object["signedTransactions"] {
            if case .array(let items) = page {
                for item in items { out.append(text(item)) }
            } else {
                out.append(nil)
            }
        }
        // Get All Subscription Statuses: data[] (per subscription group) . lastTransactions[] (per original
        // transaction), each with a signed transaction and a signed renewal info.
        if case .array(let groups)? = object["data"] {
            for group in groups {
                guard case .object(let g) = group, case .array(let last)? = g["lastTransactions"] else { continue }
                for entry in last {
                    guard case .object(let entry) = entry else {
                        out.append(nil)
                        continue
                    }
                    for key in ["signedTransactionInfo", "signedRenewalInfo"] {
                        if let value = entry[key] { out.append(text(value)) }
                    }
                }
            }
        }
        return out
    }

    /// A JSON string's text; nil for any other value.
    private static func text(_ value: PayloadValue) -> String? {
        guard case .string(let s) = value else { return nil }
        return s
    }
}
