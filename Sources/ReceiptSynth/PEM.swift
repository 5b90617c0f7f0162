import Foundation

/// PEM armour: base64 in 64-column lines between `-----BEGIN label-----` and `-----END label-----`.
public enum PEM {
    public static func encode(_ der: [UInt8], label: String) -> String {
        let b64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(b64)\n-----END \(label)-----\n"
    }

    /// The DER of every PEM block in `text` with the given label, in order.
    public static func decode(_ text: String, label: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var body: String? = nil
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            if line == "-----BEGIN \(label)-----" {
                body = ""
            } else if line == "-----END \(label)-----" {
                if let b = body, let d = Data(base64Encoded: b) { out.append([UInt8](d)) }
                body = nil
            } else if body != nil {
                body! += line.trimmingCharacters(in: .whitespaces)
            }
        }
        return out
    }
}
