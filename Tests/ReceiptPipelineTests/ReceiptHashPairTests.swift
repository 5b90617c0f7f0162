import Foundation
import ReceiptIO
import ReceiptVerify
import Testing

/// The worker decodes records two at a time and computes their `receipt_sha256` together: every row must still be
/// what one record at a time gives, whichever neighbour a record has and wherever a batch ends.
@Suite(.serialized) struct ReceiptHashPairTests {
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
        // One record per batch hashes every receipt alone; two, three and five put each pairing and a lone last
        // record at every position; the default batches pair the records of whole 64 KB runs.
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

    @Test func theCorpusPairsRecordsRejectedBeforeDecodingWithDecodedOnesBothWays() throws {
        // What the two tests above rely on: records 2k and 2k+1 (one pair when batches start at even records)
        // include a failure before decoding next to a decoded receipt, in both orders, and two decoded receipts.
        let rejected = corpus.truth.map { t in (t["error_code"] as? String).map(Self.beforeDecoding.contains) ?? false }
        var kinds: Set<[Bool]> = []
        for k in stride(from: 0, to: rejected.count - 1, by: 2) { kinds.insert([rejected[k], rejected[k + 1]]) }
        #expect(kinds.isSuperset(of: [[true, false], [false, true], [false, false]]))
    }
}
