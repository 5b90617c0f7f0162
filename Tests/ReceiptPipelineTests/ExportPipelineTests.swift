import Foundation
import ReceiptHistory
import ReceiptIO
import ReceiptModel
import ReceiptPipeline
import ReceiptSink
import ReceiptVerify
import Testing

/// Runs the pipeline over `inputs` into a memory sink.
func runToMemory(
    _ inputs: [String], threads: Int = 2, batchBytes: Int = 64 << 10,
    configure: (inout PipelineConfig) -> Void = { _ in }
) throws -> (RunOutcome, MemorySink) {
    var config = PipelineConfig()
    config.inputs = inputs
    config.threads = threads
    config.reader.batchBytes = batchBytes
    configure(&config)
    let sink = MemorySink()
    let cache = config.verify ? try Corpus.shared.cache() : nil
    let outcome = ExportPipeline(config: config, sink: sink, cache: cache).run()
    return (outcome, sink)
}

/// Truth values as plain types.
private func int64(_ v: Any?) -> Int64? { (v as? NSNumber)?.int64Value }
private func string(_ v: Any?) -> String? { v as? String }

@Suite(.serialized) struct ExportPipelineTests {
    let corpus = Corpus.shared

    @Test func writesOneRowPerRecordWithTheStatusAndCodeOfTheTruth() throws {
        let (outcome, sink) = try runToMemory([corpus.ndjson.path])
        guard case .completed(let result) = outcome else {
            Issue.record("run did not complete: \(outcome)")
            return
        }
        #expect(sink.finished && !sink.aborted)
        let rows = sink.receipts
        #expect(rows.count == corpus.truth.count)
        #expect(result.counts.records == corpus.truth.count)
        for (row, t) in zip(rows, corpus.truth) {
            let line = int64(t["line"])
            #expect(row["line"] == .int(t["line"]), "line")
            #expect(row["status"] == .int(t["status"]), "status at line \(line ?? 0): \(t["kind"]!)")
            #expect(row["error_code"] == .str(t["error_code"]), "code at line \(line ?? 0): \(t["kind"]!)")
            #expect(row["source"] == .s(corpus.ndjson.path))
            #expect(row["verified"] == .b(int64(t["status"]) == 0))
            // Every line the truth has an id for is readable JSON, except the invalid-JSON kinds.
            if string(t["kind"]) != "invalid-json" && string(t["kind"]) != "oversized-line" {
                #expect(row["record_id"] == .str(t["id"]), "id at line \(line ?? 0)")
            } else {
                #expect(row["record_id"] == .null)
            }
        }
        // The bad kinds are all there, so the comparison above covered each error path.
        let kinds = Set(corpus.truth.compactMap { string($0["kind"]) })
        #expect(kinds.count >= 15)
    }

    @Test func fillsTheReceiptColumnsOfEveryDecodableRecordFromTheTruth() throws {
        let (_, sink) = try runToMemory([corpus.ndjson.path])
        for (row, t) in zip(sink.receipts, corpus.truth) where t["receipt_type"] is String {
            let line = int64(t["line"]) ?? 0
            for key in [
                "receipt_type", "bundle_id", "application_version", "original_application_version",
                "digest_algorithm",
            ] {
                #expect(row[key] == .str(t[key]), "\(key) at line \(line)")
            }
            for key in [
                "app_item_id", "download_id", "version_external_identifier", "receipt_creation_date",
                "original_purchase_date", "expiration_date",
            ] {
                #expect(row[key] == .int(t[key]), "\(key) at line \(line)")
            }
            #expect(row["in_app_count"] == .int(t["in_app_count"]))
            #expect(row["receipt_sha256"]?.description.count == 66)
            if string(t["kind"]) != "signer-not-found" { #expect(row["signer_sha256"]?.description.count == 66) }
        }
    }

    @Test func writesTheTransactionsOfValidReceiptsExactlyAndInOrder() throws {
        let (_, sink) = try runToMemory([corpus.ndjson.path])
        var expected: [Row] = []
        for t in corpus.truth where int64(t["status"]) == 0 {
            for tr in t["transactions"] as! [[String: Any]] {
                expected.append([
                    "line": .int(t["line"]), "record_id": .str(t["id"]), "bundle_id": .str(t["bundle_id"]),
                    "receipt_type": .str(t["receipt_type"]), "quantity": .int(tr["quantity"]),
                    "product_id": .str(tr["product_id"]), "transaction_id": .str(tr["transaction_id"]),
                    "original_transaction_id": .str(tr["original_transaction_id"]),
                    "purchase_date": .int(tr["purchase_date"]),
                    "original_purchase_date": .int(tr["original_purchase_date"]),
                    "expires_date": .int(tr["expires_date"]), "cancellation_date": .int(tr["cancellation_date"]),
                    "web_order_line_item_id": .int(tr["web_order_line_item_id"]),
                    "is_trial_period": .bool(tr["is_trial_period"]),
                    "is_in_intro_offer_period": .bool(tr["is_in_intro_offer_period"]),
                    "promotional_offer_id": .str(tr["promotional_offer_id"]),
                    "product_type": .int(tr["product_type"]), "cancellation_reason": .int(tr["cancellation_reason"]),
                ])
            }
        }
        // The JWS-only columns are null for every purchase of a receipt.
        let jwsOnly = TableSchema.transactions.columns.dropFirst(19).map(\.name)
        #expect(jwsOnly.count == 17)
        for i in expected.indices { for name in jwsOnly { expected[i][name] = .null } }
        var got = sink.transactions
        for i in got.indices { got[i]["source"] = nil }
        #expect(got.count == expected.count)
        #expect(expected.count > 100)
        for (k, (g, e)) in zip(got, expected).enumerated() where g != e {
            Issue.record("transaction \(k) differs: got \(g), expected \(e)")
            break
        }
    }

    @Test func theHistoryMergeIsAPhaseOfItsOwnAfterEveryRecord() throws {
        /// What the history step saw of the run's progress while it ran.
        final class Seen: @unchecked Sendable {
            // Weak: the pipeline holds the history step, which holds this (a strong reference would be a cycle).
            weak var pipeline: ExportPipeline? = nil
            var during: RunResult? = nil
        }
        let out = corpus.temporaryDirectory("phases")
        var config = PipelineConfig()
        config.inputs = [corpus.ndjson.path]
        config.threads = 2
        let sink = try makeSink(format: .csv, directory: out.path, metadata: RunMetadata())
        let history = HistoryCollector(directory: out.path, inputs: config.inputs, resumable: false)
        let seen = Seen()
        let pipeline = ExportPipeline(
            config: config, sink: sink, cache: try corpus.cache(), history: history,
            finishHistory: { () throws(HistoryError) -> Void in seen.during = seen.pipeline?.progress })
        seen.pipeline = pipeline
        #expect(pipeline.progress.phase == .records)
        guard case .completed(let result) = pipeline.run() else { throw RunDidNotComplete(description: "run failed") }
        let during = try #require(seen.during)
        #expect(during.phase == .history && during.hasHistory)
        // Every record was counted before the merge began.
        #expect(during.counts.records == result.counts.records && result.counts.records == corpus.truth.count)
        #expect(pipeline.progress.phase == .finishing)
    }

    @Test func oneThreadAndManyThreadsProduceIdenticalFiles() throws {
        func export(threads: Int) throws -> (Data, Data) {
            let out = corpus.temporaryDirectory("threads\(threads)")
            var config = PipelineConfig()
            config.inputs = [corpus.ndjson.path]
            config.threads = threads
            // Small batches: many of them, finished out of order by the workers.
            config.reader.batchBytes = 32 << 10
            let sink = try makeSink(format: .csv, directory: out.path, metadata: RunMetadata())
            guard case .completed = ExportPipeline(config: config, sink: sink, cache: try corpus.cache()).run() else {
                throw RunDidNotComplete(description: "run failed")
            }
            return (
                try Data(contentsOf: out.appendingPathComponent("receipts.csv")),
                try Data(contentsOf: out.appendingPathComponent("transactions.csv"))
            )
        }
        let one = try export(threads: 1)
        let many = try export(threads: 6)
        #expect(one.0 == many.0)
        #expect(one.1 == many.1)
        #expect(one.0.count > 10_000)
    }

    @Test func readsZstdInputToTheSameRowsAsPlainInput() throws {
        let (_, plain) = try runToMemory([corpus.ndjson.path])
        let (outcome, zst) = try runToMemory([corpus.zst.path])
        guard case .completed(let r) = outcome else {
            Issue.record("zst run did not complete: \(outcome)")
            return
        }
        #expect(
            r.counts.inputBytes
                == (try FileManager.default.attributesOfItem(atPath: corpus.zst.path)[.size]
                    as! Int))
        func strip(_ rows: [Row]) -> [Row] {
            rows.map {
                var r = $0; r["source"] = nil; return r
            }
        }
        #expect(strip(plain.receipts) == strip(zst.receipts))
        #expect(strip(plain.transactions) == strip(zst.transactions))
    }

    @Test func keepsInputOrderAndSourceNamesAcrossSeveralFiles() throws {
        // The corpus split in two files at a line boundary; line numbers restart in the second.
        let text = try String(contentsOf: corpus.ndjson, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        let cut = lines.count / 2
        let a = corpus.dir.appendingPathComponent("part-a.ndjson")
        let b = corpus.dir.appendingPathComponent("part-b.ndjson")
        try (lines[..<cut].joined(separator: "\n") + "\n").write(to: a, atomically: true, encoding: .utf8)
        try (lines[cut...].joined(separator: "\n") + "\n").write(to: b, atomically: true, encoding: .utf8)
        let (_, whole) = try runToMemory([corpus.ndjson.path])
        let (_, parts) = try runToMemory([a.path, b.path], threads: 3)
        let rows = parts.receipts
        #expect(rows.count == whole.receipts.count)
        for (k, (p, w)) in zip(rows, whole.receipts).enumerated() {
            guard case .i(let wl)? = w["line"] else { continue }
            let inA = wl <= Int64(cut)
            #expect(p["source"] == .s(inA ? a.path : b.path), "row \(k)")
            #expect(p["line"] == .i(inA ? wl : wl - Int64(cut)), "row \(k)")
            #expect(p["status"] == w["status"] && p["error_code"] == w["error_code"], "row \(k)")
        }
    }

    @Test func readsPlainBase64LinesWithCRLFAndBlankLines() throws {
        // The valid receipts of the corpus as bare base64 lines, CRLF-terminated, with a blank line and junk.
        var text = ""
        var expected: [Int64] = []
        var lineNumber: Int64 = 0
        for line in try String(contentsOf: corpus.ndjson, encoding: .utf8).split(separator: "\n") {
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let b64 = o["receipt-data"] as? String, b64.count > 100,
                let t = corpus.truth.first(where: { string($0["id"]) == string(o["id"]) }), int64(t["status"]) == 0
            else { continue }
            text += b64 + "\r\n"
            lineNumber += 1
            expected.append(0)
            if expected.count == 20 { break }
        }
        text += "\r\n%%%not base64%%%\r\nQUJD"
        expected += [21002, 21002]
        let file = corpus.dir.appendingPathComponent("lines.b64")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let (outcome, sink) = try runToMemory([file.path])
        guard case .completed(let r) = outcome else {
            Issue.record("run did not complete: \(outcome)")
            return
        }
        let rows = sink.receipts
        #expect(rows.map { $0["status"] } == expected.map { .i($0) })
        #expect(rows.suffix(2).map { $0["error_code"] } == [.s("invalid_base64"), .s("malformed_der")])
        #expect(rows.last?["line"] == .i(lineNumber + 3))
        #expect(rows.allSatisfy { $0["record_id"] == .null })
        #expect(r.counts.blankLines == 1)
    }

    @Test func turnsLinesOverTheMaximumRecordSizeIntoRecordTooLargeRows() throws {
        let (_, sink) = try runToMemory([corpus.ndjson.path]) { $0.reader.maxRecordSize = 4096 }
        #expect(sink.receipts.count == corpus.truth.count)
        for row in sink.receipts where row["error_code"] == .s("record_too_large") {
            #expect(row["status"] == .i(21002) && row["record_id"] == .null)
        }
        #expect(sink.receipts.filter { $0["error_code"] == .s("record_too_large") }.count > corpus.truth.count / 2)
    }

    @Test func rejectsTheOtherEnvironmentWith21007Or21008() throws {
        for (env, status): (EnvironmentRequirement, Int32) in [(.production, 21007), (.sandbox, 21008)] {
            let (_, sink) = try runToMemory([corpus.ndjson.path]) { $0.environment = env }
            var rejected = 0
            for (row, t) in zip(sink.receipts, corpus.truth) where int64(t["status"]) == 0 {
                // Only the named environment passes: Xcode receipts and receipts naming none are rejected under both.
                let type = string(t["receipt_type"]) ?? ""
                let sandbox = type.hasSuffix("Sandbox")
                let production = !type.isEmpty && !sandbox && type != "Xcode" && type != "LocalTesting"
                let wrong = env == .production ? !production : !sandbox
                #expect(row["status"] == .i(wrong ? Int64(status) : 0), "\(type)")
                #expect(row["error_code"] == (wrong ? .s("wrong_environment") : .null))
                if wrong { rejected += 1 }
            }
            #expect(rejected > 0)
        }
    }

    @Test func rejectsReceiptsOfOtherAppsWhenBundleIDsAreGiven() throws {
        let valid = corpus.truth.filter { int64($0["status"]) == 0 }
        let allowed = try #require(string(valid.first?["bundle_id"]))
        let (_, sink) = try runToMemory([corpus.ndjson.path]) { $0.bundleIDs = [allowed, "com.example.other"] }
        var transactions = 0
        for (row, t) in zip(sink.receipts, corpus.truth) where int64(t["status"]) == 0 {
            let ok = string(t["bundle_id"]) == allowed
            #expect(row["status"] == .i(ok ? 0 : 21003))
            #expect(row["error_code"] == (ok ? .null : .s("wrong_bundle_id")))
            if ok { transactions += (t["transactions"] as! [Any]).count }
        }
        #expect(sink.transactions.count == transactions)
    }

    @Test func decodesWithoutVerifyingUnderNoVerify() throws {
        let (_, sink) = try runToMemory([corpus.ndjson.path]) { $0.verify = false }
        for (row, t) in zip(sink.receipts, corpus.truth) {
            #expect(row["verified"] == .b(false))
            // Decoding errors stay; authentication errors disappear.
            let status = int64(t["status"])
            let decodeError = status == 21002 && string(t["kind"]) != "signer-not-found"
            #expect(row["status"] == .i(decodeError ? 21002 : 0), "\(t["kind"]!)")
        }
    }

    @Test func rendersOneVerifyReceiptObjectPerRecordForNDJSON() throws {
        let (_, sink) = try runToMemory([corpus.ndjson.path]) { $0.renderNDJSON = true }
        let text = sink.batches.flatMap(\.ndjson)
        let lines = text.split(separator: 0x0A)
        #expect(lines.count == corpus.truth.count)
        for (line, t) in zip(lines, corpus.truth) {
            let o = try JSONSerialization.jsonObject(with: Data(line)) as! [String: Any]
            #expect(int64(o["status"]) == int64(t["status"]))
            #expect(int64(o["line"]) == int64(t["line"]))
            #expect(string(o["error_code"]) == string(t["error_code"]))
            if int64(t["status"]) == 0 {
                let receipt = try #require(o["receipt"] as? [String: Any])
                #expect(string(receipt["bundle_id"]) == string(t["bundle_id"]))
                let inApp = try #require(receipt["in_app"] as? [[String: Any]])
                let tr = t["transactions"] as! [[String: Any]]
                #expect(inApp.map { string($0["transaction_id"]) } == tr.map { string($0["transaction_id"]) })
                #expect(inApp.allSatisfy { $0["purchase_date_ms"] is String && $0["quantity"] is String })
            }
        }
    }

    @Test func abortsTheSinkAndSaysWhyWhenAnInputIsMissing() throws {
        let (outcome, sink) = try runToMemory([corpus.ndjson.path, "/nonexistent/in.ndjson"])
        guard case .failed(.input(let error), _) = outcome else {
            Issue.record("expected an input failure, got \(outcome)")
            return
        }
        #expect(error.code == .cannotOpen)
        #expect(error.message.contains("/nonexistent/in.ndjson"))
        #expect(sink.aborted && !sink.finished && sink.batches.isEmpty)
    }

    @Test func failsTheRunOnATruncatedZstdInput() throws {
        let data = try Data(contentsOf: corpus.zst)
        let cut = corpus.dir.appendingPathComponent("cut.ndjson.zst")
        try data.prefix(data.count * 2 / 3).write(to: cut)
        let (outcome, sink) = try runToMemory([cut.path])
        guard case .failed(.input(let error), _) = outcome else {
            Issue.record("expected an input failure, got \(outcome)")
            return
        }
        #expect(error.code == .truncated)
        #expect(error.message.contains(cut.path) && error.message.contains("truncated"))
        #expect(sink.aborted && !sink.finished)
    }

    @Test func abortsTheSinkWhenAWriteFails() throws {
        var config = PipelineConfig()
        config.inputs = [corpus.ndjson.path]
        config.threads = 2
        config.reader.batchBytes = 16 << 10
        let sink = MemorySink()
        let full = SinkError.system(.write, "receipts.csv", errno: ENOSPC)
        sink.beforeWrite = { (n) throws(SinkError) in if n == 3 { throw full } }
        let outcome = ExportPipeline(config: config, sink: sink, cache: try corpus.cache()).run()
        guard case .failed(.output(let error), _) = outcome else {
            Issue.record("expected an output failure, got \(outcome)")
            return
        }
        #expect(error == full && error.isDiskFull)
        #expect(error.message.hasPrefix("the disk holding the output is full: cannot write receipts.csv: "))
        #expect(sink.aborted && !sink.finished)
    }

    @Test(.timeLimit(.minutes(2))) func aHistoryAddThatFailsMidRunStopsTheRunWithItsError() throws {
        let out = corpus.temporaryDirectory("history-fails")
        var config = PipelineConfig()
        config.inputs = [corpus.ndjson.path]
        config.threads = 2
        config.reader.batchBytes = 16 << 10
        let sink = MemorySink()
        // A tiny budget spills at the first occurrence, into a folder that cannot be made: a file is in its way.
        let history = HistoryCollector(directory: out.path, inputs: config.inputs, resumable: false, memoryBudget: 1)
        #expect(FileManager.default.createFile(atPath: history.spillRoot, contents: Data("x".utf8)))
        defer { try? FileManager.default.removeItem(atPath: history.spillRoot) }
        final class Called: @unchecked Sendable { var finish = false }
        let called = Called()
        let outcome = ExportPipeline(
            config: config, sink: sink, cache: try corpus.cache(), history: history,
            finishHistory: { () throws(HistoryError) -> Void in called.finish = true }
        ).run()
        guard case .failed(.output(let error), _) = outcome else {
            Issue.record("expected an output failure, got \(outcome)")
            return
        }
        #expect(error.code == .history)
        #expect(error.message.hasPrefix("cannot create the history spill folder \(history.spillRoot)/"))
        #expect(sink.aborted && !sink.finished && !called.finish)
    }

    @Test func cancellingStopsTheRunAndAbortsTheSink() throws {
        var config = PipelineConfig()
        config.inputs = [corpus.ndjson.path]
        config.threads = 2
        config.reader.batchBytes = 16 << 10
        let sink = MemorySink()
        let box = PipelineBox()
        sink.beforeWrite = { (n) throws(SinkError) in if n == 2 { box.pipeline?.cancel() } }
        let pipeline = ExportPipeline(config: config, sink: sink, cache: try corpus.cache())
        box.pipeline = pipeline
        defer { box.pipeline = nil }  // sink -> closure -> box -> pipeline -> sink would leak the whole run
        let outcome = pipeline.run()
        guard case .cancelled(let r) = outcome else {
            Issue.record("expected cancellation, got \(outcome)")
            return
        }
        #expect(sink.aborted && !sink.finished)
        #expect(r.counts.records < corpus.truth.count)
    }
}

final class PipelineBox: @unchecked Sendable {
    var pipeline: ExportPipeline?
}

/// A test's run that did not reach the state the test needs.
struct RunDidNotComplete: Error, CustomStringConvertible {
    var description: String
}
