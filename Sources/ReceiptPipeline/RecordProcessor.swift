import ReceiptDER
import ReceiptIO
import ReceiptJWS
import ReceiptModel
import ReceiptSink
import ReceiptVerify

/// One worker thread's per-record path: each line of a batch becomes receipt bytes (`LineDecoder`), a verdict
/// (`ReceiptEvaluator`) and rows (`RowAppender`), in input order.
///
/// Records are taken two at a time, both decoded and parsed, so that their `receipt_sha256` and the digests of
/// their signed contents are computed together (`ContentHasher.digests`, two SHA lanes). Owns every buffer it
/// touches, sized once for the largest record, so a warm processor does not allocate per record (column arrays
/// grow only until they reach a batch's size, and are reused across batches).
public final class RecordProcessor {
    let decoder: LineDecoder
    let evaluator: ReceiptEvaluator
    let appender: RowAppender
    /// Lines holding JWS instead of a receipt (`JWSLine`) take this path.
    let jws: JWSRowAppender
    let hasher = ContentHasher()
    let lanes: (Lane, Lane)

    /// - Parameter cache: the run's shared chain cache; required when `config.verify` is true.
    public init(config: PipelineConfig, cache: ChainCache?) {
        precondition(!config.verify || cache != nil, "verification needs a chain cache")
        let maxRecord = config.reader.maxRecordSize
        decoder = LineDecoder(
            field: config.field, idField: config.idField, deviceIDField: config.deviceIDField, maxRecord: maxRecord)
        evaluator = ReceiptEvaluator(
            verifier: config.verify ? cache.map { ReceiptVerifier(cache: $0) } : nil, policies: config.policies)
        appender = RowAppender(renderNDJSON: config.renderNDJSON)
        // Each worker's JWS verifier caches the chain verdicts it reaches, against the run's anchors.
        jws = JWSRowAppender(
            evaluator: JWSEvaluator(verifier: config.verify ? cache.map { JWSVerifier(anchors: $0.anchors) } : nil),
            policies: config.policies, renderNDJSON: config.renderNDJSON)
        lanes = (Lane(maxRecord: maxRecord), Lane(maxRecord: maxRecord))
    }

    deinit {
        lanes.0.deallocate()
        lanes.1.deallocate()
    }

    /// One held record's buffers: base64 output, the unescaped record id, the hex `receipt_sha256`, and the parser
    /// whose views describe the record until the lane's next record.
    struct Lane {
        let decoded: UnsafeMutableRawBufferPointer
        let idScratch: UnsafeMutableRawBufferPointer
        let hex: UnsafeMutableRawBufferPointer
        let parser = ReceiptParser()

        init(maxRecord: Int) {
            decoded = .allocate(byteCount: Base64.maxDecodedCount(maxRecord), alignment: 16)
            idScratch = .allocate(byteCount: max(maxRecord, 1), alignment: 16)
            hex = .allocate(byteCount: 64, alignment: 16)
        }

        func deallocate() {
            decoded.deallocate()
            idScratch.deallocate()
            hex.deallocate()
        }
    }

    /// A record taken as far as its parsed receipt, or to the failure that stopped it before its receipt bytes.
    struct Held {
        var ctx: RowContext
        let lane: Lane
        let decoded: DecodedLine
        /// Why parsing the receipt failed (the parser keeps what it decoded before the error).
        var parseError: ReceiptError? = nil
        /// The digest of the signed content, computed together with the other lane's.
        var contentDigest: ContentDigest? = nil
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
            // Two records at a time: both decoded and parsed, their digests computed together, then each judged
            // and appended in input order (a lone last record alone).
            var i = batch.records.startIndex
            while i < batch.records.endIndex {
                var first = hold(batch, i, src, lanes.0)
                if i + 1 < batch.records.endIndex {
                    var second = hold(batch, i + 1, src, lanes.1)
                    let (receipts, contents) = hasher.digests(digestInput(first), digestInput(second))
                    keep(receipts.0, contents.0, &first)
                    keep(receipts.1, contents.1, &second)
                    finish(first, &out, &counts)
                    finish(second, &out, &counts)
                    i += 2
                } else {
                    let (receipts, contents) = hasher.digests(digestInput(first), nil)
                    keep(receipts.0, contents.0, &first)
                    finish(first, &out, &counts)
                    i += 1
                }
            }
        }
        counts.transactions = out.transactions.rowCount
    }

    /// Decodes record `i` into `lane` and parses its receipt (its rows are appended later, by `finish`).
    private func hold(_ batch: RecordBatch, _ i: Int, _ src: UnsafeRawBufferPointer, _ lane: Lane) -> Held {
        let span = batch.records[i]
        var ctx = RowContext(source: src, line: span.line)
        let decoded: DecodedLine
        if span.tooLarge {
            decoded = .failed(
                .recordTooLarge, .text("the line is longer than the maximum record size (--max-record-size)", at: -1))
        } else {
            // The record id may point into the line after the closure: the line lies in the batch's storage,
            // untouched until the next fill.
            decoded = batch.withRecord(i) { line in
                decoder.decode(line, batch.format, into: lane.decoded, idScratch: lane.idScratch, &ctx)
            }
        }
        var held = Held(ctx: ctx, lane: lane, decoded: decoded)
        if case .receipt(let der) = decoded { held.parseError = evaluator.parse(der, with: lane.parser) }
        return held
    }

    /// What to hash for a record: its receipt bytes, and its signed content when it will be verified.
    private func digestInput(_ h: Held) -> ReceiptDigestInput {
        guard case .receipt(let der) = h.decoded else { return ReceiptDigestInput(receipt: nil) }
        guard h.parseError == nil, let signed = evaluator.signedContent(der, parsedBy: h.lane.parser) else {
            return ReceiptDigestInput(receipt: der)
        }
        return ReceiptDigestInput(receipt: der, content: signed.content, algorithm: signed.algorithm)
    }

    private func keep(_ receipt: SHA256Digest?, _ content: ContentDigest?, _ h: inout Held) {
        if let receipt {
            receipt.writeHex(into: h.lane.hex)
            h.ctx.receiptSHA256 = UnsafeRawBufferPointer(h.lane.hex)
        }
        h.contentDigest = content
    }

    /// Judges the record and appends its rows.
    private func finish(_ h: Held, _ out: inout ColumnBatch, _ counts: inout BatchCounts) {
        switch h.decoded {
        case .failed(let code, let detail):
            appender.append(h.ctx, Verdict(rejected: code, detail), into: &out, &counts)
        case .jws(let items):
            jws.append(h.ctx, items, into: &out, &counts)
        case .receipt(let der):
            let verdict = evaluator.judge(
                der, parsedBy: h.lane.parser, parseError: h.parseError, contentDigest: h.contentDigest,
                device: h.ctx.device)
            appender.append(h.ctx, verdict, der: der, parser: h.lane.parser, into: &out, &counts)
        }
    }
}
