import ReceiptIO
import ReceiptModel

/// The field options that name a column of a CSV input, in the order `LineDecoder.csvNames` lists their names
/// and `CSVRowScanner.cell(_:)` reads their cells.
enum CSVNamedField: Int, CaseIterable {
    /// `--id-field`: `record_id`.
    case id
    /// `--device-id-field`.
    case deviceID
}

/// What the CSV step made of a row: the receipt cell's text, or the row's rejection (or its JWS body).
enum CSVCellRead {
    case text(UnsafeRawBufferPointer)
    case failed(DecodedLine)
}

extension LineDecoder {
    /// Splits a CSV row by `header`: sets `ctx`'s record id and device from their columns and returns the receipt
    /// cell's text (unescaped into `unescaped` when it holds doubled quotes), or the row's `invalid_csv` or
    /// `empty_receipt` rejection. A cell holding a JWS body (a JSON object with a body key) is read as one.
    func csvReceipt(
        _ row: UnsafeRawBufferPointer, _ header: CSVHeader, idScratch: UnsafeMutableRawBufferPointer,
        _ ctx: inout RowContext
    ) -> CSVCellRead {
        let scanner: CSVRowScanner
        if let csv, csv.header === header {
            scanner = csv
        } else {
            scanner = CSVRowScanner(header: header, named: csvNames)
            csv = scanner
        }
        let r = scanner.scan(row)
        if let id = scanner.cell(CSVNamedField.id.rawValue), !id.range.isEmpty {
            ctx.recordID = Self.cellText(row, id, idScratch)
        }
        if let device = scanner.cell(CSVNamedField.deviceID.rawValue), !device.range.isEmpty {
            ctx.device = Self.device(row, device)
        }
        if let code = r.error {
            if let problem = r.problem { return .failed(.failed(code, .text(problem.detail, at: problem.offset))) }
            if code == .invalidCSV {
                let fields = r.fieldCount == 1 ? "1 field" : "\(r.fieldCount) fields"
                let detail = "the CSV row has \(fields) where the header has \(header.columns.count)"
                return .failed(.failed(code, .string(detail)))
            }
            return .failed(.failed(code, .text("the receipt cell is empty", at: -1)))
        }
        let text = Self.cellText(row, r.receipt, unescaped)
        if Self.startsObject(text) && JWSLine.looksLikeBody(text) { return .failed(.jws(JWSLine.extract(text))) }
        return .text(text)
    }

    /// The contents of `cell`, unescaped into `scratch` (at least the row's length) when it holds doubled quotes.
    static func cellText(_ row: UnsafeRawBufferPointer, _ cell: CSVCell, _ scratch: UnsafeMutableRawBufferPointer)
        -> UnsafeRawBufferPointer
    {
        guard cell.escaped else { return UnsafeRawBufferPointer(rebasing: row[cell.range]) }
        // In range: unescaping never lengthens, and the cell lies in the row.
        let n = CSVFields.unescape(row, cell, into: scratch)
        return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[0..<n])
    }

    /// The `--device-id-field` cell: malformed unless it is one of the accepted forms (`DeviceIdentifier`).
    static func device(_ row: UnsafeRawBufferPointer, _ cell: CSVCell) -> RecordDevice {
        // Every accepted form is at most 36 characters.
        guard cell.range.count <= 72 else { return .malformed }
        return withUnsafeTemporaryAllocation(byteCount: 72, alignment: 1) { scratch in
            let text = cellText(row, cell, scratch)
            return DeviceIdentifier(text: text).map { .identifier($0) } ?? .malformed
        }
    }
}
