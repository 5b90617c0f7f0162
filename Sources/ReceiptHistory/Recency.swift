import ReceiptModel

/// Where an occurrence stands in the recency order: a later `created` (receipt_creation_date) is newer; on equal
/// dates the later input (command-line index), then the later line, then the later entry in the receipt.
/// Distinct occurrences never compare equal, so "the newest" is always one occurrence.
struct Recency: Comparable, Sendable {
    /// Epoch milliseconds; `Int64.min` when the receipt has no creation date (older than any dated one).
    var created: Int64
    var input: Int64
    var line: Int64
    var entry: Int64

    static func < (a: Recency, b: Recency) -> Bool {
        (a.created, a.input, a.line, a.entry) < (b.created, b.input, b.line, b.entry)
    }

    func encode(into w: inout SpillWriter) {
        w.i64(created)
        w.i64(input)
        w.i64(line)
        w.i64(entry)
    }

    static func decode(_ r: inout SpillReader) throws(HistoryError) -> Recency {
        Recency(created: try r.i64(), input: try r.i64(), line: try r.i64(), entry: try r.i64())
    }
}

/// The environment of a record in the history tables, from its class (`RecordEnvironment`): `Sandbox` for a
/// sandbox record, otherwise `Production` (a record naming no environment included). The raw values order as the
/// names do, bytewise.
enum HistoryEnvironment: UInt8, Sendable {
    case production = 0
    case sandbox = 1

    /// nil for StoreKit testing records (`Xcode`, `LocalTesting`), which never count.
    init?(_ environment: RecordEnvironment) {
        switch environment {
        case .sandbox: self = .sandbox
        case .production, .absent: self = .production
        case .xcode, .localTesting: return nil
        }
    }

    var name: String { self == .production ? "Production" : "Sandbox" }
}
