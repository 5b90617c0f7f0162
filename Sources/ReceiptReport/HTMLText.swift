/// Text for the report page: HTML escaping (every value from the data is escaped, so that a hostile bundle id
/// or product id is shown as text and never read as markup) and numbers formatted for people.
public enum HTMLText {
    /// `s` with `&`, `<`, `>`, `"` and `'` replaced by entities: safe in element content and quoted attributes.
    public static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // Control characters other than tab and newline are shown as U+FFFD: they have no place in a page.
                if ch.value < 0x20 && ch != "\t" && ch != "\n" {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(ch)
                }
            }
        }
        return out
    }

    /// `1234567` as `1,234,567`.
    public static func number(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(d)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// `part / whole` as a percentage with one decimal (`95.2%`); `–` when `whole` is 0.
    public static func percent(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "–" }
        let tenths = (Double(part) * 1000 / Double(whole)).rounded()
        let t = Int(tenths)
        return "\(t / 10).\(t % 10)%"
    }

    /// A rate or duration with at most one decimal and thousands separators (`12,345.6`).
    public static func decimal(_ v: Double) -> String {
        guard v.isFinite else { return "–" }
        let tenths = Int((v * 10).rounded())
        return number(tenths / 10) + (tenths % 10 == 0 ? "" : ".\(abs(tenths % 10))")
    }
}
