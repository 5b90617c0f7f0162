/// Builds JSON text by hand: fixed key order and exact integers, so output is byte-stable across runs and
/// platforms (Foundation's encoder orders keys and formats numbers its own way).
struct JSONText {
    var text = ""

    static func quoted(_ s: String) -> String {
        // Fast path: generated strings rarely need escaping.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) { return "\"" + s + "\"" }
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    private mutating func key(_ k: String) {
        if !text.isEmpty, text.last != "{", text.last != "[" { text += "," }
        text += "\"\(k)\":"
    }

    mutating func string(_ k: String, _ v: String?) {
        key(k)
        text += v.map(Self.quoted) ?? "null"
    }

    mutating func int(_ k: String, _ v: Int64?) {
        key(k)
        text += v.map { String($0) } ?? "null"
    }

    mutating func bool(_ k: String, _ v: Bool?) {
        key(k)
        text += v.map { $0 ? "true" : "false" } ?? "null"
    }

    /// Writes `k: [ {...}, ... ]` from pre-built object texts.
    mutating func array(_ k: String, _ objects: [String]) {
        key(k)
        text += "[" + objects.joined(separator: ",") + "]"
    }
}
