import ReceiptModel

/// What the scanner found in one CSV data row.
public struct CSVRecord: Sendable, Equatable {
    /// `invalidCSV` or `emptyReceipt`; nil when `receipt` is a non-empty cell.
    public var error: ErrorCode?
    /// Why the row is not CSV (with `invalidCSV`); nil for a field count that differs from the header's.
    public var problem: CSVProblem?
    /// How many fields the row has (0 with a `problem`).
    public var fieldCount = 0
    /// The receipt cell; empty unless `error` is nil.
    public var receipt = CSVCell(range: 0..<0, escaped: false)

    public init() {}
}

/// Picks the cells of one CSV data row that the run reads: the receipt column of the input's header, and one
/// column for each named field option (`--id-field`, `--device-id-field`, ...), given by name in `init` and read
/// back by its position with `cell(_:)`. A row must have exactly as many fields as the header.
///
/// One per thread: it keeps the last row's cells until the next `scan`.
public final class CSVRowScanner {
    public let header: CSVHeader
    /// The column of each named option, nil when the header has no such column.
    public let namedColumns: [Int?]
    /// The named options' cells in the last row scanned (nil: no such column, or the row had an error).
    private var cells: [CSVCell?]
    /// For each column of the header: the named options it fills (usually none).
    private let wanted: [[Int]]

    /// - Parameters:
    ///   - header: the input's header row.
    ///   - named: the column names of the field options, in an order of the caller's choosing; nil for an option
    ///     not given.
    public init(header: CSVHeader, named: [String?]) {
        self.header = header
        namedColumns = named.map { $0.flatMap(header.column(named:)) }
        cells = Array(repeating: nil, count: named.count)
        var wanted = Array(repeating: [Int](), count: header.columns.count)
        for (k, column) in namedColumns.enumerated() {
            if let column { wanted[column].append(k) }
        }
        self.wanted = wanted
    }

    /// Scans one row (terminator excluded).
    public func scan(_ row: UnsafeRawBufferPointer) -> CSVRecord {
        for k in cells.indices { cells[k] = nil }
        var result = CSVRecord()
        let columns = wanted.count
        let receiptColumn = header.receiptColumn
        var receipt: CSVCell? = nil
        let split = CSVFields.split(row) { index, cell in
            guard index < columns else { return }
            if index == receiptColumn { receipt = cell }
            for k in wanted[index] { cells[k] = cell }
        }
        switch split {
        case .failure(let problem):
            result.error = .invalidCSV
            result.problem = problem
        case .success(let count):
            result.fieldCount = count
            if count != columns {
                result.error = .invalidCSV
            } else if let receipt, !receipt.range.isEmpty {
                result.receipt = receipt
            } else {
                result.error = .emptyReceipt
            }
        }
        if result.error == .invalidCSV {
            for k in cells.indices { cells[k] = nil }
        }
        return result
    }

    /// The cell of named option `k` in the last row scanned; nil when the header has no such column or the row
    /// is not valid CSV.
    public func cell(_ k: Int) -> CSVCell? { cells[k] }
}
