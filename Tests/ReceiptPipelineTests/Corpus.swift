import Foundation
import ReceiptModel
import ReceiptSink
import ReceiptSynth
import ReceiptVerify

/// A generated input with ground truth, made once per test process: NDJSON with every bad-record kind, the same
/// zstd-compressed, the test CA's root as trust anchor, and the truth file parsed.
final class Corpus: @unchecked Sendable {
    static let shared: Corpus = {
        do { return try Corpus(count: 700, seed: 11) } catch { fatalError("cannot generate the test corpus: \(error)") }
    }()

    let dir: URL
    let ndjson: URL
    let zst: URL
    let rootPEM: URL
    /// One entry per record, in input order.
    let truth: [[String: Any]]

    init(count: Int, seed: UInt64) throws {
        Self.removeLeftovers()
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-pipeline-\(getpid())-\(seed)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // The CA's keys take seconds to derive: keep them between test runs.
        let caDir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-pipeline-tests-ca")
        let pki = try TestPKI.load(directory: caDir)
        rootPEM = caDir.appendingPathComponent("root.pem")
        let factory = RecordFactory(pki: pki, seed: seed, badFraction: 0.35)
        ndjson = dir.appendingPathComponent("input.ndjson")
        zst = dir.appendingPathComponent("input.ndjson.zst")
        _ = try Generator.run(factory: factory, count: count, out: ndjson)
        _ = try Generator.run(factory: factory, count: count, out: zst)
        let text = try String(contentsOf: Generator.truthURL(for: ndjson), encoding: .utf8)
        truth = try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    /// Deletes the corpora of earlier test processes that have exited (`rf-pipeline-PID-SEED`), so that runs
    /// do not pile up data in the temporary directory while concurrent runs keep theirs.
    private static func removeLeftovers() {
        let tmp = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? [] {
            let parts = name.split(separator: "-")
            guard parts.count == 4, name.hasPrefix("rf-pipeline-"), let pid = Int32(parts[2]) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: tmp.appendingPathComponent(name))
            }
        }
    }

    func cache() throws -> ChainCache { ChainCache(anchors: try TrustAnchors(paths: [rootPEM.path])) }

    func temporaryDirectory(_ name: String) -> URL {
        let d = dir.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }
}

/// A sink that keeps every batch in memory and records how the run ended.
final class MemorySink: BatchSink, @unchecked Sendable {
    var batches: [ColumnBatch] = []
    var finished = false
    var aborted = false
    /// Called before each write; throwing makes the write fail.
    var beforeWrite: ((Int) throws(SinkError) -> Void)? = nil

    func write(_ batch: ColumnBatch) throws(SinkError) {
        try beforeWrite?(batches.count)
        batches.append(batch)
    }
    func finish() throws(SinkError) { finished = true }
    func abort() { aborted = true }

    /// All receipts rows as dictionaries of column name to value.
    var receipts: [Row] { rows(\.receipts) }
    var transactions: [Row] { rows(\.transactions) }

    private func rows(_ table: KeyPath<ColumnBatch, ColumnTable>) -> [Row] {
        var out: [Row] = []
        for b in batches {
            let t = b[keyPath: table]
            precondition(t.isConsistent, "inconsistent column table")
            for r in 0..<t.rowCount {
                var row: Row = [:]
                for c in t.schema.columns {
                    switch c.kind {
                    case .string: row[c.name] = .str(t.strings[c.slot][r])
                    case .int64, .timestampMillis: row[c.name] = .int(t.int64s[c.slot][r])
                    case .int32, .date: row[c.name] = .int(t.int32s[c.slot][r].map { Int64($0) })
                    case .bool: row[c.name] = .bool(t.bools[c.slot][r])
                    }
                }
                out.append(row)
            }
        }
        return out
    }
}

typealias Row = [String: Cell]

/// One table cell, comparable with a value from the truth file.
enum Cell: Hashable, CustomStringConvertible {
    case null
    case s(String)
    case i(Int64)
    case b(Bool)

    static func str(_ v: Any?) -> Cell { (v as? String).map(Cell.s) ?? .null }
    static func int(_ v: Any?) -> Cell {
        if let v = v as? Int64 { return .i(v) }
        return (v as? NSNumber).map { .i($0.int64Value) } ?? .null
    }
    static func bool(_ v: Any?) -> Cell { (v as? Bool).map(Cell.b) ?? .null }

    var description: String {
        switch self {
        case .null: return "null"
        case .s(let v): return "\"\(v)\""
        case .i(let v): return "\(v)"
        case .b(let v): return "\(v)"
        }
    }
}
