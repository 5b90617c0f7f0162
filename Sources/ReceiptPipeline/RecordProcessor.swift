import ReceiptDER
import ReceiptIO
import ReceiptJWS
import ReceiptModel
import ReceiptSink
import ReceiptVerify

/// One worker thread's per-record path. Each line of a batch goes, in input order, through named steps:
/// `read` (the line from the batch), `decode` (NDJSON and base64: receipt bytes, `LineDecoder`), `digest`
/// (`receipt_sha256`, by OpenSSL), `evaluate` (parse, verify, policies: a verdict, `ReceiptEvaluator`) and `rows`
/// (`RowAppender`). One record is finished before the next is read; nothing of one record is kept for the next.
///
/// Owns the buffers the steps write into, sized once for the largest record, so a warm processor allocates only
/// what OpenSSL does (column arrays grow until they reach a batch's size, and are reused across batches).
public final class RecordProcessor {
    let decoder: LineDecoder
    let evaluator: ReceiptEvaluator
    let appender: RowAppender
    /// Lines holding JWS instead of a receipt (`JWSLine`) take this path.
    let jws: JWSRowAppender
    let hasher = ContentHasher()
    let parser = ReceiptParser()
    /// Base64 output: the current record's receipt bytes.
    let decoded: UnsafeMutableRawBufferPointer
    /// The current record's id, when it had to be unescaped.
    let idScratch: UnsafeMutableRawBufferPointer

    /// - Parameter cache: the run's shared chain cache; required when `config.verify` is true.
    public init(config: PipelineConfig, cache: ChainCache?) {
        precondition(!config.verify || cache != nil, "verification needs a chain cache")
        let maxRecord = config.reader.maxRecordSize
        decoder = LineDecoder(
            field: config.field, idField: config.idField, deviceIDField: config.deviceIDField,
            userField: config.userField, maxRecord: maxRecord)
        evaluator = ReceiptEvaluator(
            verifier: config.verify ? cache.map { ReceiptVerifier(cache: $0) } : nil, policies: config.policies)
        appender = RowAppender(renderNDJSON: config.renderNDJSON)
        // Each worker's JWS verifier caches the chain verdicts it reaches, against the run's anchors.
        jws = JWSRowAppender(
            evaluator: JWSEvaluator(
                verifier: config.verify ? cache.map { JWSVerifier(anchors: $0.anchors) } : nil, trust: []),
            judge: JWSJudge(policies: config.policies), renderNDJSON: config.renderNDJSON)
        decoded = .allocate(byteCount: Base64.maxDecodedCount(maxRecord), alignment: 16)
        idScratch = .allocate(byteCount: max(maxRecord, 1), alignment: 16)
    }

    deinit {
        decoded.deallocate()
        idScratch.deallocate()
    }

    /// Turns every record of `batch` into rows of `out` (cleared first), in order, and counts them.
    public func process(_ batch: RecordBatch, into out: inout ColumnBatch, counts: inout BatchCounts) {
        out.sequence = batch.sequence
        out.inputBytes = batch.inputBytes
        out.receipts.removeAll()
        out.transactions.removeAll()
        out.renewals.removeAll()
        out.history.removeAll()
        out.ndjson.removeAll(keepingCapacity: true)
        counts.reset()
        counts.blankLines = batch.blankLines
        counts.inputBytes = batch.inputBytes
        var source = batch.sourceName
        source.withUTF8 { name in
            let src = UnsafeRawBufferPointer(name)
            for i in batch.records.indices {
                record(batch, i, source: src, &out, &counts)
            }
        }
        counts.transactions = out.transactions.rowCount
    }

    /// One record, through every step to its rows.
    private func record(
        _ batch: RecordBatch, _ i: Int, source: UnsafeRawBufferPointer, _ out: inout ColumnBatch,
        _ counts: inout BatchCounts
    ) {
        var ctx = RowContext(source: source, line: batch.records[i].line)
        switch read(batch, i, &ctx) {
        case .failed(let code, let detail):
            appender.append(ctx, Verdict(rejected: code, detail), into: &out, &counts)
        case .jws(let items):
            jws.append(ctx, items, into: &out, &counts)
        case .receipt(let der):
            let digest = hasher.sha256(der)
            ctx.receiptSHA256 = digest
            let verdict = evaluator.evaluate(der, with: parser, receiptDigest: digest, device: ctx.device)
            appender.append(ctx, verdict, der: der, parser: parser, into: &out, &counts)
        }
    }

    /// Reads record `i` of `batch` and decodes it into `decoded` (its id into `ctx`).
    private func read(_ batch: RecordBatch, _ i: Int, _ ctx: inout RowContext) -> DecodedLine {
        guard !batch.records[i].tooLarge else {
            return .failed(
                .recordTooLarge, .text("the line is longer than the maximum record size (--max-record-size)", at: -1))
        }
        // The record id may point into the line after the closure: the line lies in the batch's storage,
        // untouched until the next fill, and the record's rows are appended before the next record is read.
        return batch.withRecord(i) { line in
            decoder.decode(line, batch.format, into: decoded, idScratch: idScratch, &ctx)
        }
    }
}
