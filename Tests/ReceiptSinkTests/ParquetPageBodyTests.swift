import CZstd
import Foundation
import ReceiptModel
import Testing

@testable import ReceiptSink

/// The bodies of OPTIONAL columns' data pages: definition levels (u32 length, RLE / bit-packed) then the PLAIN
/// values. The writer puts the levels in the headroom before the values, or copies both into the page buffer when
/// they do not fit; every page of both paths must decode, with a small reader here, to the rows written.
@Suite struct ParquetPageBodyTests {
    /// One decoded data page: a definition level per row and the PLAIN bytes after the levels.
    struct Page {
        var levels: [UInt8]
        var values: [UInt8]
    }

    /// Writes `rows` as a one-column table of `kind` (int64: the value's byte count) and returns its data pages.
    static func pages(
        _ kind: ColumnKind, _ rows: [[UInt8]?], headroom: Int?, pageBytes: Int, maxRows: Int
    ) throws -> [Page] {
        let schema = TableSchema(name: "t", [("v", kind, true)])
        var options = SinkOptions()
        options.pageBytes = pageBytes
        options.maxRowsPerPage = maxRows
        options.dictionaryColumns = []
        options.levelsHeadroom = headroom
        // One folder per case: the parameterized cases run in parallel.
        let dir = "/tmp/receiptflow-sinktests-\(getpidValue())-bodies-\(kind)-\(headroom ?? -1)-\(pageBytes)"
        try makeDirectory(dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try ParquetFileWriter(
            schema: schema, directory: dir, fileName: "t.parquet", metadata: RunMetadata(), options: options,
            zstd: try ZstdCompressor(level: 1))
        let batches = [1, 50, 7, 300, 2, 1000]  // uneven, cycled
        var start = 0
        var b = 0
        while start < rows.count {
            let n = batches[b % batches.count]
            b += 1
            var t = ColumnTable(schema: schema)
            for v in rows[start..<min(start + n, rows.count)] {
                t.appendRow { w in
                    if kind == .int64 {
                        w.int64(0, v.map { Int64($0.count) })
                    } else if let v {
                        v.withUnsafeBytes { w.string(0, $0) }
                    } else {
                        w.null(string: 0)
                    }
                }
            }
            try writer.append(t)
            start += n
        }
        try writer.finish()
        return try decodePages(readFile(dir + "/t.parquet"))
    }

    /// Decompresses and splits every data page of a one-column file.
    static func decodePages(_ file: [UInt8]) -> [Page] {
        let n = file.count
        let footer = Int(file[n - 8]) | Int(file[n - 7]) << 8 | Int(file[n - 6]) << 16 | Int(file[n - 5]) << 24
        var r = ParquetPageTests.CompactReader(bytes: file, at: 4)
        var out: [Page] = []
        while r.at < n - 8 - footer {
            let h = r.structure()
            let (size, compressed) = (h[2] ?? 0, h[3] ?? 0)
            if h[1] == 0, let d = h.nested[5] {
                var body = [UInt8](repeating: 0, count: size)
                let got = body.withUnsafeMutableBytes { b in
                    file.withUnsafeBytes { f in ZSTD_decompress(b.baseAddress, size, f.baseAddress! + r.at, compressed)
                    }
                }
                #expect(ZSTD_isError(got) == 0 && got == size)
                out.append(split(body, rows: d[1] ?? 0))
            }
            r.at += compressed
        }
        return out
    }

    /// Reads `rows` definition levels (bit width 1) from the length-prefixed RLE / bit-packed section.
    static func split(_ body: [UInt8], rows: Int) -> Page {
        let length = Int(body[0]) | Int(body[1]) << 8 | Int(body[2]) << 16 | Int(body[3]) << 24
        var at = 4
        var levels: [UInt8] = []
        while levels.count < rows && at < 4 + length {
            var header = 0
            var shift = 0
            while true {
                let b = Int(body[at])
                at += 1
                header |= (b & 0x7F) << shift
                if b < 0x80 { break }
                shift += 7
            }
            if header & 1 == 1 {
                for _ in 0..<(header >> 1) {
                    for bit in 0..<8 { levels.append(body[at] >> UInt8(bit) & 1) }
                    at += 1
                }
            } else {
                levels += [UInt8](repeating: body[at], count: header >> 1)
                at += 1
            }
        }
        #expect(at == 4 + length)
        return Page(levels: Array(levels.prefix(rows)), values: Array(body[(4 + length)...]))
    }

    /// The column as read back: levels pick a value from the PLAIN section or a null.
    static func rows(_ kind: ColumnKind, _ pages: [Page]) -> [[UInt8]?] {
        var out: [[UInt8]?] = []
        for p in pages {
            var at = 0
            for level in p.levels {
                guard level == 1 else {
                    out.append(nil)
                    continue
                }
                if kind == .int64 {
                    let v = (0..<8).reduce(0) { $0 | Int(p.values[at + $1]) << (8 * $1) }
                    out.append([UInt8](repeating: 0x78, count: v))  // the writer stored the byte count
                    at += 8
                } else {
                    let n = (0..<4).reduce(0) { $0 | Int(p.values[at + $1]) << (8 * $1) }
                    out.append(Array(p.values[(at + 4)..<(at + 4 + n)]))
                    at += 4 + n
                }
            }
            #expect(at == p.values.count)
        }
        return out
    }

    @Test(arguments: [
        // nil: the default headroom (levels always fit); 0: never fits (the copy path); 24: some pages fit.
        (ColumnKind.int64, nil as Int?), (.int64, 0), (.int64, 24), (.string, nil), (.string, 0), (.string, 24),
    ])
    func levelsAndValuesOfEveryPageDecodeToTheRows(_ kind: ColumnKind, _ headroom: Int?) throws {
        // 3,000 rows: runs of nulls and values of several lengths, then alternating nulls (bit-packed levels).
        let rows: [[UInt8]?] = (0..<3000).map { i in
            let null = i < 1500 ? (i / 37) % 3 == 0 : i % 2 == 0
            return null ? nil : [UInt8](repeating: 0x78, count: i % 23)
        }
        let pages = try Self.pages(kind, rows, headroom: headroom, pageBytes: 2400, maxRows: 400)
        #expect(pages.count > 5)
        #expect(Self.rows(kind, pages) == rows)
        if headroom == 24 {
            // Both paths ran: some pages' levels fit in 32 bytes (24 rounded up to 16s), some did not.
            let sizes = pages.map { 4 + RLEHybridSize.of($0.levels) }
            #expect(sizes.contains { $0 <= 32 } && sizes.contains { $0 > 32 })
        }
    }
}

/// The encoded size of a page's levels, from the writer's own encoder (checked by RLEHybridTests).
enum RLEHybridSize {
    static func of(_ levels: [UInt8]) -> Int {
        var out = ByteBuffer()
        levels.withUnsafeBufferPointer { RLEHybrid.encode($0, bitWidth: 1, into: &out) }
        return out.count
    }
}
