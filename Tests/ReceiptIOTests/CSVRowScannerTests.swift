import ReceiptIO
import ReceiptModel
import Testing

private func header(_ line: String, fields: [String] = CSVHeader.defaultReceiptFields) -> CSVHeader? {
    Array(line.utf8).withUnsafeBytes { CSVHeader.detect($0, receiptFields: fields) }
}

/// Scans `row` and returns the record with the text of the receipt and of each named cell.
private func scan(_ scanner: CSVRowScanner, _ row: String) -> (CSVRecord, String?, [String?]) {
    Array(row.utf8).withUnsafeBytes { p in
        let r = scanner.scan(p)
        let receipt =
            r.error == nil ? String(decoding: UnsafeRawBufferPointer(rebasing: p[r.receipt.range]), as: UTF8.self) : nil
        let named = scanner.namedColumns.indices.map { k in
            scanner.cell(k).map { String(decoding: UnsafeRawBufferPointer(rebasing: p[$0.range]), as: UTF8.self) }
        }
        return (r, receipt, named)
    }
}

@Suite struct CSVRowScannerTests {
    @Test func theHeaderNamesTheReceiptColumnByTheFieldPriority() throws {
        let h = try #require(header("receipt,user_id,receipt_data"))
        #expect(h.columns == ["receipt", "user_id", "receipt_data"])
        #expect(h.receiptColumn == 2)
        #expect(try #require(header("\"a,b\",\"blob\"", fields: ["blob"])).columns == ["a,b", "blob"])
        #expect(header("user_id,payload") == nil)
        #expect(header("{\"receipt_data\":\"QUJD\"}") == nil)
        #expect(header("id,\"receipt_data") == nil)
        // Columns beyond the limit: not a header, whatever it names.
        let wide = String(repeating: ",", count: CSVHeader.maxColumns) + "receipt"
        #expect(header(wide) == nil)
        #expect(header(String(repeating: ",", count: CSVHeader.maxColumns - 1) + "receipt")?.receiptColumn == 9_999)
    }

    @Test func namedOptionsReadTheirColumnsInAnyOrder() throws {
        let h = try #require(header("user_id,receipt_data,created_at,device"))
        let scanner = CSVRowScanner(header: h, named: ["created_at", nil, "user_id", "absent", "device"])
        #expect(scanner.namedColumns == [2, nil, 0, nil, 3])
        let (r, receipt, named) = scan(scanner, "u7,\"QU\nJD\",2024-01-01,\"E6\"\"\"")
        #expect(r.error == nil)
        #expect(receipt == "QU\nJD")
        #expect(named == ["2024-01-01", nil, "u7", nil, "E6\"\""])
        #expect(scanner.cell(4)?.escaped == true)
    }

    @Test func aRowWithAnotherFieldCountOrABadQuoteIsInvalidCSV() throws {
        let h = try #require(header("id,receipt_data"))
        let scanner = CSVRowScanner(header: h, named: ["id"])
        let (few, _, fewCells) = scan(scanner, "only")
        #expect(few.error == .invalidCSV && few.fieldCount == 1 && few.problem == nil)
        #expect(fewCells == [nil])
        let (many, _, _) = scan(scanner, "1,QUJD,extra")
        #expect(many.error == .invalidCSV && many.fieldCount == 3)
        let (quote, _, _) = scan(scanner, "1,QU\"JD")
        #expect(quote.error == .invalidCSV && quote.problem == .strayQuote(4))
        let (empty, _, cells) = scan(scanner, "9,\"\"")
        #expect(empty.error == .emptyReceipt)
        #expect(cells == ["9"])
        #expect(ErrorCode.invalidCSV.status == .malformed)
    }
}
