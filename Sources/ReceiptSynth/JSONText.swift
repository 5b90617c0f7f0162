import ReceiptModel

/// The members of one JSON object, compact, in the order written: the generator's truth and summary lines. Its
/// caller writes the braces (a truth line starts `{"line":N,` elsewhere). Text comes from ReceiptModel's writer, with
/// exact integers, so output is byte-stable across runs and platforms.
struct JSONText {
    private var bytes: [UInt8] = []
    private var writer = JSONWriter.continuingObject(hasMembers: false)

    /// The members written so far, separated by commas.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func string(_ k: String, _ v: String?) {
        writer.key(k, into: &bytes)
        if let v {
            ReceiptModel.JSONText.appendString(v, into: &bytes)
        } else {
            ReceiptModel.JSONText.appendNull(into: &bytes)
        }
    }

    mutating func int(_ k: String, _ v: Int64?) {
        writer.key(k, into: &bytes)
        if let v {
            ReceiptModel.JSONText.appendInteger(v, into: &bytes)
        } else {
            ReceiptModel.JSONText.appendNull(into: &bytes)
        }
    }

    mutating func bool(_ k: String, _ v: Bool?) {
        writer.key(k, into: &bytes)
        if let v {
            ReceiptModel.JSONText.appendBool(v, into: &bytes)
        } else {
            ReceiptModel.JSONText.appendNull(into: &bytes)
        }
    }

    /// `s` as a JSON string literal, quotes included.
    static func quoted(_ s: String) -> String {
        var bytes: [UInt8] = []
        ReceiptModel.JSONText.appendString(s, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `k: [ {...}, ... ]` from objects already rendered as JSON text.
    mutating func array(_ k: String, _ objects: [String]) {
        writer.key(k, into: &bytes)
        writer.beginArray(into: &bytes)
        for o in objects {
            writer.element(into: &bytes)
            bytes.append(contentsOf: o.utf8)
        }
        writer.endArray(into: &bytes)
    }
}
