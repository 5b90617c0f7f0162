import Foundation
import ReceiptModel
import Testing

@testable import ReceiptSink

/// Where pages end: a page closes after the row that brings it to `pageBytes` (PLAIN value bytes, or one per
/// dictionary index) or to `maxRowsPerPage` rows, and after the row whose new entry takes the dictionary past
/// `dictionaryMaxBytes` (PLAIN from then on). Checked against a row-at-a-time model of that rule, over tables
/// appended in uneven batches, by reading back the page headers of one-column files.
@Suite struct ParquetPageTests {
    enum Kind { case int64, int32, bool, plainString, dictionaryString }

    struct Options {
        var pageBytes: Int
        var maxRows: Int
        var dictionaryBytes = 1 << 20
    }

    /// (rows, encoding) of each data page, as the rule above makes them.
    static func model(_ kind: Kind, _ values: [[UInt8]?], _ o: Options) -> [(Int, Int)] {
        var pages: [(Int, Int)] = []
        var rows = 0
        var bytes = 0
        var bits = 0
        var dictionary = kind == .dictionaryString
        var entries = Set<[UInt8]>()
        var dictionaryBytes = 0
        for v in values {
            rows += 1
            if let v {
                switch kind {
                case .int64: bytes += 8
                case .int32: bytes += 4
                case .bool:
                    if bits % 8 == 0 { bytes += 1 }
                    bits += 1
                case .plainString, .dictionaryString:
                    if dictionary {
                        if entries.insert(v).inserted { dictionaryBytes += 4 + v.count }
                        bytes += 1
                    } else {
                        bytes += 4 + v.count
                    }
                }
            }
            let over = dictionary && dictionaryBytes > o.dictionaryBytes
            if bytes >= o.pageBytes || rows >= o.maxRows || over {
                pages.append((rows, dictionary ? 8 : 0))
                (rows, bytes, bits) = (0, 0, 0)
                if over { dictionary = false }
            }
        }
        if rows > 0 { pages.append((rows, dictionary ? 8 : 0)) }
        return pages
    }

    /// Writes `values` as the one column of a table, in batches of the given sizes (cycled), and returns the
    /// (rows, encoding) of each data page in the file.
    static func written(
        _ kind: Kind, nullable: Bool, _ values: [[UInt8]?], _ o: Options, batches: [Int]
    ) throws -> [(Int, Int)] {
        let columnKind: ColumnKind =
            switch kind {
            case .int64: .int64
            case .int32: .int32
            case .bool: .bool
            case .plainString, .dictionaryString: .string
            }
        let schema = TableSchema(name: "t", [("v", columnKind, nullable)])
        var options = SinkOptions()
        options.pageBytes = o.pageBytes
        options.maxRowsPerPage = o.maxRows
        options.dictionaryMaxBytes = o.dictionaryBytes
        options.dictionaryColumns = kind == .dictionaryString ? ["v"] : []
        // One folder per case: the parameterized cases run in parallel.
        let dir = "/tmp/receiptflow-sinktests-\(getpidValue())-pages-\(kind)-\(nullable)-\(o.pageBytes)-\(o.maxRows)"
        try makeDirectory(dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try ParquetFileWriter(
            schema: schema, directory: dir, fileName: "t.parquet", metadata: RunMetadata(), options: options,
            zstd: try ZstdCompressor(level: 1))
        var start = 0
        var b = 0
        while start < values.count {
            let n = min(batches[b % batches.count], values.count - start)
            var t = ColumnTable(schema: schema)
            for v in values[start..<(start + n)] {
                t.appendRow { w in
                    switch kind {
                    case .int64: w.int64(0, v.map { Int64($0.count) })
                    case .int32: w.int32(0, v.map { Int32($0.count) })
                    case .bool: w.bool(0, v.map { $0.count % 2 == 0 })
                    case .plainString, .dictionaryString:
                        if let v { v.withUnsafeBytes { w.string(0, $0) } } else { w.null(string: 0) }
                    }
                }
            }
            try writer.append(t)
            start += n
            b += 1
        }
        try writer.finish()
        return try dataPages(readFile(dir + "/t.parquet"))
    }

    @Test(arguments: [
        (Kind.int64, false, Options(pageBytes: 100, maxRows: 1000)),
        (Kind.int64, true, Options(pageBytes: 100, maxRows: 9)),
        (Kind.int32, true, Options(pageBytes: 50, maxRows: 7)),
        (Kind.bool, true, Options(pageBytes: 2, maxRows: 100)),
        (Kind.bool, false, Options(pageBytes: 1, maxRows: 1000)),
        (Kind.plainString, true, Options(pageBytes: 64, maxRows: 10)),
        (Kind.plainString, false, Options(pageBytes: 1, maxRows: 5)),
        (Kind.dictionaryString, true, Options(pageBytes: 20, maxRows: 1000)),
        (Kind.dictionaryString, true, Options(pageBytes: 1000, maxRows: 13, dictionaryBytes: 60)),
        (Kind.dictionaryString, false, Options(pageBytes: 7, maxRows: 1000, dictionaryBytes: 0)),
    ])
    func pagesCloseWhereTheRowAtATimeRuleSays(_ kind: Kind, _ nullable: Bool, _ o: Options) throws {
        // 400 rows: every 3rd null when nullable, values of 0 to 22 bytes, 30 distinct strings.
        let values: [[UInt8]?] = (0..<400).map { i in
            nullable && i % 3 == 1 ? nil : Array("value-\(i * 7 % 30)-".utf8) + [UInt8](repeating: 0x78, count: i % 11)
        }
        let pages = try Self.written(kind, nullable: nullable, values, o, batches: [1, 7, 64, 3, 100, 2])
        let expected = Self.model(kind, values, o)
        #expect(pages.map(\.0) == expected.map(\.0))
        #expect(pages.map(\.1) == expected.map(\.1))
        #expect(pages.map(\.0).reduce(0, +) == values.count)
    }

    // MARK: - Reading page headers

    /// The (num_values, encoding) of each data page between the magic and the footer.
    static func dataPages(_ file: [UInt8]) -> [(Int, Int)] {
        let n = file.count
        let footer = Int(file[n - 8]) | Int(file[n - 7]) << 8 | Int(file[n - 6]) << 16 | Int(file[n - 5]) << 24
        var r = CompactReader(bytes: file, at: 4)
        var out: [(Int, Int)] = []
        while r.at < n - 8 - footer {
            let h = r.structure()
            if h[1] == 0, let d = h.nested[5] { out.append((d[1] ?? -1, d[2] ?? -1)) }
            r.at += h[3] ?? 0  // the compressed page body
        }
        return out
    }

    /// Enough of the Thrift compact protocol to read page headers (i32 fields and nested structs).
    struct CompactReader {
        let bytes: [UInt8]
        var at: Int

        struct Fields {
            var ints: [Int: Int] = [:]
            var nested: [Int: Fields] = [:]
            subscript(id: Int) -> Int? { ints[id] }
        }

        mutating func varint() -> Int {
            var v = 0
            var shift = 0
            while true {
                let b = bytes[at]
                at += 1
                v |= Int(b & 0x7F) << shift
                if b < 0x80 { return v }
                shift += 7
            }
        }

        mutating func structure() -> Fields {
            var f = Fields()
            var last = 0
            while true {
                let h = Int(bytes[at])
                at += 1
                if h == 0 { return f }
                let id = last + (h >> 4)
                last = id
                switch h & 0x0F {
                case 5, 6:
                    let z = varint()
                    f.ints[id] = (z >> 1) ^ -(z & 1)
                case 12: f.nested[id] = structure()
                case 1, 2: f.ints[id] = h & 0x0F == 1 ? 1 : 0
                default: preconditionFailure("unexpected field type in a page header")
                }
            }
        }
    }
}
