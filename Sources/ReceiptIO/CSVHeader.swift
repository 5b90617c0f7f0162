/// The header row of a CSV input: its column names, and which column holds the receipt.
///
/// An input is CSV when its first line (after a byte-order mark) is a CSV row naming the receipt field: `--field`,
/// or one of `receipt-data`, `receipt_data`, `receipt` (the first of them present is the receipt column).
public final class CSVHeader: Sendable, Equatable, CustomStringConvertible {
    /// The column names, in order.
    public let columns: [String]
    /// The index of the receipt column in `columns`.
    public let receiptColumn: Int
    /// The most columns a header may have; a first line with more is not read as a header.
    public static let maxColumns = 10_000
    /// The receipt field names tried without `--field`, in priority order (`NDJSONScanner.defaultFields`).
    public static let defaultReceiptFields = ["receipt-data", "receipt_data", "receipt"]

    public init?(columns: [String], receiptFields: [String]) {
        guard let k = receiptFields.lazy.compactMap({ columns.firstIndex(of: $0) }).first else { return nil }
        self.columns = columns
        receiptColumn = k
    }

    /// The header `line` (terminator and byte-order mark removed) is, or nil when it is not a CSV row of at most
    /// `maxColumns` fields naming one of `receiptFields`.
    public static func detect(_ line: UnsafeRawBufferPointer, receiptFields: [String]) -> CSVHeader? {
        guard !receiptFields.isEmpty else { return nil }
        var names: [String] = []
        var tooMany = false
        let split = CSVFields.split(line) { _, cell in
            // A hostile first line of millions of commas allocates no name past the limit.
            guard names.count < maxColumns else {
                tooMany = true
                return
            }
            if cell.escaped {
                let out = UnsafeMutableRawBufferPointer.allocate(byteCount: max(cell.range.count, 1), alignment: 1)
                defer { out.deallocate() }
                let n = CSVFields.unescape(line, cell, into: out)
                names.append(String(decoding: UnsafeRawBufferPointer(rebasing: out[0..<n]), as: UTF8.self))
            } else {
                names.append(String(decoding: UnsafeRawBufferPointer(rebasing: line[cell.range]), as: UTF8.self))
            }
        }
        guard case .success = split, !tooMany else { return nil }
        return CSVHeader(columns: names, receiptFields: receiptFields)
    }

    /// The index of the first column named `name`, or nil.
    public func column(named name: String) -> Int? { columns.firstIndex(of: name) }

    public static func == (a: CSVHeader, b: CSVHeader) -> Bool {
        a === b || (a.columns == b.columns && a.receiptColumn == b.receiptColumn)
    }

    public var description: String { "CSV(\(columns.joined(separator: ",")))" }
}
