import Foundation
import ReceiptIO
import ReceiptVerify
import Testing

/// The worker's per-record path: every record's `receipt_sha256` and verdict are its own, whichever records came
/// before it through the same worker's buffers, and wherever a batch ends.
@Suite(.serialized) struct RecordProcessorTests {
    let corpus = Corpus.shared

    /// Codes given before a record's receipt bytes exist: such rows have no receipt_sha256.
    static let beforeDecoding: Set<String> = [
        "invalid_json", "missing_field", "empty_receipt", "invalid_base64", "record_too_large",
    ]

    @Test func receiptSHA256IsTheSHA256OfEachRecordsDecodedReceipt() throws {
        let (_, sink) = try runToMemory([corpus.ndjson.path])
        let lines = try String(contentsOf: corpus.ndjson, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        let hasher = ContentHasher()
        var compared = 0
        for row in sink.receipts {
            guard case .i(let line)? = row["line"] else {
                Issue.record("row without a line: \(row)")
                continue
            }
            if case .s(let code)? = row["error_code"], Self.beforeDecoding.contains(code) {
                #expect(row["receipt_sha256"] == .null, "line \(line)")
                continue
            }
            #expect(row["receipt_sha256"] != .null, "line \(line)")
            // Independently of the pipeline: Foundation's JSON and base64, then SHA-256 one buffer at a time.
            let object = try? JSONSerialization.jsonObject(with: Data(lines[Int(line) - 1].utf8)) as? [String: Any]
            guard let text = object?["receipt-data"] as? String, let der = Data(base64Encoded: text) else { continue }
            let want = der.withUnsafeBytes { hasher.sha256($0).hex }
            #expect(row["receipt_sha256"] == .s(want), "line \(line)")
            compared += 1
        }
        #expect(compared > corpus.truth.count / 2)
    }

    @Test func rowsAreTheSameWhateverTheBatchSize() throws {
        // Batches of one, two, three and five records put every record at each position of a batch, after each
        // kind of neighbour; the default batches hold whole 64 KB runs.
        let (_, whole) = try runToMemory([corpus.ndjson.path], threads: 1)
        let (receipts, transactions) = (whole.receipts, whole.transactions)
        #expect(receipts.count == corpus.truth.count)
        for perBatch in [1, 2, 3, 5] {
            let (_, sink) = try runToMemory([corpus.ndjson.path], threads: 1) {
                $0.reader.maxRecordsPerBatch = perBatch
            }
            #expect(sink.batches.count >= corpus.truth.count / perBatch)
            let (r, t) = (sink.receipts, sink.transactions)
            #expect(r.count == receipts.count && t.count == transactions.count, "\(perBatch) per batch")
            if let k = zip(r, receipts).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                Issue.record("\(perBatch) per batch, receipts row \(k): \(r[k]) != \(receipts[k])")
            }
            if let k = zip(t, transactions).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                Issue.record("\(perBatch) per batch, transactions row \(k): \(t[k]) != \(transactions[k])")
            }
        }
    }

    /// A valid receipt of the corpus (its bytes) and a copy with one byte of its signed payload changed: the same
    /// length and shape, so it is decoded into the same place of the same worker's buffer.
    static func validAndTampered(_ corpus: Corpus) throws -> (valid: [UInt8], tampered: [UInt8]) {
        let lines = try String(contentsOf: corpus.ndjson, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        let k = try #require(corpus.truth.firstIndex { ($0["status"] as? NSNumber)?.intValue == 0 })
        let line = Int((corpus.truth[k]["line"] as? NSNumber)?.intValue ?? 0)
        let object = try JSONSerialization.jsonObject(with: Data(lines[line - 1].utf8)) as? [String: Any]
        let der = try #require(
            (object?["receipt-data"] as? String).flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) })
        // The bundle id lies in the payload (the signed content), never in the certificates.
        let marker = Array("com.".utf8)
        let at = try #require((0...(der.count - marker.count)).first { Array(der[$0..<($0 + 4)]) == marker })
        var tampered = der
        tampered[at + 2] = UInt8(ascii: "n")
        return (der, tampered)
    }

    @Test func aTamperedReceiptFailsAfterAValidOneOfTheSameShapeOnTheSameWorker() throws {
        let (valid, tampered) = try Self.validAndTampered(corpus)
        #expect(valid.count == tampered.count)
        let order = [valid, tampered, tampered, valid, tampered, valid, valid, tampered]
        let text =
            order.enumerated().map { i, der in
                "{\"id\":\"r\(i)\",\"receipt-data\":\"\(Data(der).base64EncodedString())\"}"
            }.joined(separator: "\n") + "\n"
        let file = corpus.temporaryDirectory("same-shape").appendingPathComponent("input.ndjson")
        try Data(text.utf8).write(to: file)
        // One worker, every record in one batch: each is decoded into the same buffer as the one before it.
        let (_, sink) = try runToMemory([file.path], threads: 1)
        let rows = sink.receipts
        #expect(rows.count == order.count)
        let validHash = valid.withUnsafeBytes { ContentHasher().sha256($0).hex }
        let tamperedHash = tampered.withUnsafeBytes { ContentHasher().sha256($0).hex }
        for (i, row) in rows.enumerated() {
            let isValid = order[i] == valid
            #expect(row["error_code"] == (isValid ? .null : .s("bad_signature")), "record \(i)")
            #expect(row["verified"] == .b(isValid), "record \(i)")
            #expect(row["receipt_sha256"] == .s(isValid ? validHash : tamperedHash), "record \(i)")
        }
    }
}
