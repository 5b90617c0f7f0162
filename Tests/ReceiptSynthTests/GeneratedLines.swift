import Foundation
import ReceiptSynth

/// Reads generated lines and truth the way an independent consumer would (JSONSerialization, Foundation base64),
/// so the tests do not reuse the generator's own code to judge it.
enum GeneratedLines {
    /// The receipt bytes of a line: the top-level `receipt-data` string, JSON-unescaped, whitespace removed,
    /// base64-decoded. Nil when any step fails.
    static func receiptBytes(_ line: [UInt8]) -> [UInt8]? {
        guard let obj = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
            let s = obj["receipt-data"] as? String
        else { return nil }
        let compact = s.filter { !$0.isWhitespace }
        return Data(base64Encoded: compact).map { [UInt8]($0) }
    }

    /// The truth object of a record (`line` set to 0: the writer numbers lines).
    static func truth(_ r: GeneratedRecord) throws -> [String: Any] {
        let text = "{\"line\":0," + r.truthTail
        return try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
    }
}

/// One in-memory test PKI for the whole test target (deriving its keys takes seconds in debug builds).
enum SharedPKI {
    static let pki = try! TestPKI.load(directory: nil)
}
