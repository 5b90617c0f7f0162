import ReceiptIO
import Testing

/// The fields of `row` as text (doubled quotes made one), or the problem.
private func fields(_ row: String) -> Result<[String], CSVProblem> {
    let bytes = Array(row.utf8)
    return bytes.withUnsafeBytes { p in
        var out: [String] = []
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(p.count, 1), alignment: 1)
        defer { scratch.deallocate() }
        let r = CSVFields.split(p) { index, cell in
            precondition(index == out.count)
            let n = CSVFields.unescape(p, cell, into: scratch)
            out.append(
                String(
                    decoding: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[0..<n]), as: UTF8.self))
        }
        return r.map { count in
            precondition(count == out.count)
            return out
        }
    }
}

@Suite struct CSVFieldsTests {
    @Test func plainQuotedAndEmptyFieldsSplitAtCommas() {
        #expect(fields("a,b,c") == .success(["a", "b", "c"]))
        #expect(fields("") == .success([""]))
        #expect(fields(",") == .success(["", ""]))
        #expect(fields("a,,\"\"") == .success(["a", "", ""]))
        #expect(fields("\"x,y\",\"line\r\nbreak\",z") == .success(["x,y", "line\r\nbreak", "z"]))
    }

    @Test func doubledQuotesInsideAQuotedFieldAreOneQuote() {
        #expect(fields("\"say \"\"hi\"\"\",\"\"\"\"") == .success(["say \"hi\"", "\""]))
    }

    @Test func malformedQuotesAreNamedWithTheirOffset() {
        #expect(fields("ab\"c,d") == .failure(.strayQuote(2)))
        #expect(fields("a, \"b\"") == .failure(.strayQuote(3)))
        #expect(fields("\"ab\"c,d") == .failure(.textAfterQuote(4)))
        #expect(fields("a,\"bc") == .failure(.unterminatedQuote(2)))
        #expect(fields("a,\"bc\"\"") == .failure(.unterminatedQuote(2)))
    }
}
