import Foundation
import ReceiptSynth
import Testing

@Suite struct GeneratorTests {
    static let pki = SharedPKI.pki

    static func generate(seed: UInt64, count: Int, name: String, in dir: URL) throws -> (Data, Data, Generator.Stats) {
        let out = dir.appendingPathComponent(name)
        let factory = RecordFactory(pki: pki, seed: seed, badFraction: 0.2)
        let stats = try Generator.run(factory: factory, count: count, out: out)
        return (try Data(contentsOf: out), try Data(contentsOf: Generator.truthURL(for: out)), stats)
    }

    @Test func sameSeedGivesByteIdenticalFiles() throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        for ext in ["ndjson", "ndjson.zst"] {
            let (a, at, _) = try Self.generate(seed: 5, count: 400, name: "a.\(ext)", in: dir)
            let (b, bt, _) = try Self.generate(seed: 5, count: 400, name: "b.\(ext)", in: dir)
            let (c, _, _) = try Self.generate(seed: 6, count: 400, name: "c.\(ext)", in: dir)
            #expect(a == b)
            #expect(at == bt)
            #expect(a != c)
        }
    }

    @Test func zstdOutputStartsWithTheFrameMagicAndTruthIsBeside() throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (data, truth, _) = try Self.generate(seed: 1, count: 50, name: "s.ndjson.zst", in: dir)
        #expect(Array(data.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
        #expect(Array(truth.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
        #expect(Generator.truthURL(for: URL(fileURLWithPath: "/x/s.ndjson.zst")).path == "/x/s.truth.ndjson.zst")
        #expect(Generator.truthURL(for: URL(fileURLWithPath: "/x/s.ndjson")).path == "/x/s.truth.ndjson")
    }

    /// Line numbers in the truth count blank lines; the truth has one line per record, in order.
    @Test func truthLineNumbersMatchTheOutputLines() throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (data, truth, stats) = try Self.generate(seed: 11, count: 1500, name: "t.ndjson", in: dir)
        let lines = data.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == stats.lines)
        #expect(stats.lines > stats.records, "some blank lines expected in 1500 records")
        let truthLines = truth.split(separator: 0x0A)
        #expect(truthLines.count == 1500)
        for (k, t) in truthLines.enumerated() {
            let obj = try JSONSerialization.jsonObject(with: Data(t)) as! [String: Any]
            let n = obj["line"] as! Int
            let line = lines[lines.startIndex + n - 1]
            #expect(!line.isEmpty)
            if let id = obj["id"] as? String, obj["kind"] as? String != "invalid-json" {
                #expect(String(decoding: line, as: UTF8.self).contains("\"\(id)\""), "record \(k)")
            }
        }
    }
}
