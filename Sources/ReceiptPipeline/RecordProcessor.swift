import ReceiptDER
import ReceiptIO
import ReceiptModel
import ReceiptSink
import ReceiptVerify

/// One worker thread's reusable state and the per-record logic: scan the line, decode base64, parse, verify,
/// apply the run's policies, and append exactly one receipts row (plus transactions for a valid receipt).
///
/// Owns every buffer it touches, sized once for the largest record, so a warm processor does not allocate per
/// record (column arrays grow only until they reach a batch's size, and are reused across batches).
public final class RecordProcessor {
    let config: PipelineConfig
    let scanner: NDJSONScanner
    let verifier: ReceiptVerifier?
    let hasher = ContentHasher()
    let bundleIDs: [[UInt8]]
    /// `--format ndjson`: render a verifyReceipt-shaped object per record.
    let renderNDJSON: Bool
    /// The unescaped receipt string (consumed by base64 decoding before the next record is read).
    let unescaped: UnsafeMutableRawBufferPointer
    /// Two records are held decoded and parsed at once so that their `receipt_sha256` and their signed-content
    /// digests can be computed together.
    let lanes: (Lane, Lane)

    /// - Parameter cache: the run's shared chain cache; required when `config.verify` is true.
    public init(config: PipelineConfig, cache: ChainCache?) {
        precondition(!config.verify || cache != nil, "verification needs a chain cache")
        self.config = config
        scanner = NDJSONScanner(field: config.field, idField: config.idField)
        verifier = config.verify ? cache.map { ReceiptVerifier(cache: $0) } : nil
        bundleIDs = config.bundleIDs.map { Array($0.utf8) }
        renderNDJSON = config.renderNDJSON
        let maxRecord = config.reader.maxRecordSize
        unescaped = .allocate(byteCount: max(maxRecord, 1), alignment: 16)
        lanes = (Lane(maxRecord: maxRecord), Lane(maxRecord: maxRecord))
    }

    deinit {
        unescaped.deallocate()
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

    /// Turns every record of `batch` into rows of `out` (cleared first), in order, and counts them.
    public func process(_ batch: RecordBatch, into out: inout ColumnBatch, counts: inout BatchCounts) {
        out.sequence = batch.sequence
        out.inputBytes = batch.inputBytes
        out.receipts.removeAll()
        out.transactions.removeAll()
        out.ndjson.removeAll(keepingCapacity: true)
        counts.reset()
        counts.blankLines = batch.blankLines
        counts.inputBytes = batch.inputBytes
        var source = batch.sourceName
        source.withUTF8 { name in
            let src = UnsafeRawBufferPointer(name)
            // Two records at a time: both decoded and parsed, their receipt_sha256 and signed-content digests
            // computed together, then each verified and finished in input order (a lone last record alone).
            var i = batch.records.startIndex
            while i < batch.records.endIndex {
                var first = prepare(batch, i, src, lanes.0)
                parse(&first)
                if i + 1 < batch.records.endIndex {
                    var second = prepare(batch, i + 1, src, lanes.1)
                    parse(&second)
                    hash(&first, &second)
                    finish(first, &out, &counts)
                    finish(second, &out, &counts)
                    i += 2
                } else {
                    hash(&first)
                    finish(first, &out, &counts)
                    i += 1
                }
            }
        }
        counts.transactions = out.transactions.rowCount
    }

    /// Where the current row comes from.
    struct RowContext {
        var source: UnsafeRawBufferPointer
        var line: Int
        var recordID: UnsafeRawBufferPointer? = nil
        var receiptSHA256: UnsafeRawBufferPointer? = nil
    }

    /// A record taken as far as its parsed receipt, or to the failure that stopped it before its receipt bytes.
    struct Prepared {
        var ctx: RowContext
        /// The lane's buffer for the hex digest of the receipt bytes.
        let hex: UnsafeMutableRawBufferPointer
        /// The lane's parser: after `parse`, its views describe this record's receipt.
        let parser: ReceiptParser
        let decoded: Decoded
        /// Why parsing the receipt failed (after `parse`; the parser keeps what it decoded before the error).
        var parseError: ReceiptError? = nil
        /// The digest of the signed content, when computed together with the other record's.
        var contentDigest: ContentDigest? = nil
    }

    enum Decoded {
        /// The receipt bytes, in the lane's buffer.
        case receipt(UnsafeRawBufferPointer)
        /// Rejected before its receipt bytes (line too long, JSON, base64, empty).
        case failed(ErrorCode, Detail)
    }

    // MARK: - Input line to receipt bytes

    /// Decodes record `i` into `lane` (its row is appended later, by `finish`).
    private func prepare(_ batch: RecordBatch, _ i: Int, _ src: UnsafeRawBufferPointer, _ lane: Lane) -> Prepared {
        let span = batch.records[i]
        var ctx = RowContext(source: src, line: span.line)
        let decoded: Decoded
        if span.tooLarge {
            decoded = .failed(
                .recordTooLarge, .text("the line is longer than the maximum record size (--max-record-size)", at: -1))
        } else {
            // The record id may point into the line after the closure: the line lies in the batch's storage,
            // untouched until the next fill.
            decoded = batch.withRecord(i) { line in decodeLine(line, batch.format, lane, &ctx) }
        }
        return Prepared(ctx: ctx, hex: lane.hex, parser: lane.parser, decoded: decoded)
    }

    /// The receipt bytes of `line` into `lane.decoded`, or the failure of the line's JSON or base64.
    private func decodeLine(
        _ line: UnsafeRawBufferPointer, _ format: RecordFormat, _ lane: Lane, _ ctx: inout RowContext
    ) -> Decoded {
        var text = line
        if format == .ndjson {
            let r = scanner.scan(line)
            ctx.recordID = recordID(r.id, line, lane.idScratch)
            if let code = r.error {
                return .failed(code, .text(r.detail, at: r.errorOffset))
            }
            let raw = UnsafeRawBufferPointer(rebasing: line[r.receipt.range])
            if r.receipt.escaped {
                // In range: unescaping never lengthens, and raw.count <= line.count <= unescaped.count.
                let n = JSONString.unescape(raw, into: unescaped)
                text = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(unescaped)[0..<n])
            } else {
                text = raw
            }
        }
        let n: Int
        do throws(ReceiptError) {
            n = try Base64.decode(text, into: lane.decoded)
        } catch {
            // A StoreKit 2 JWS fails base64 at its first `.`: name it instead.
            if JWSDetector.isJWS(text) { return .failed(.jwsNotReceipt, .text(JWSDetector.detail, at: -1)) }
            return .failed(.invalidBase64, Detail(error))
        }
        if n == 0 {
            return .failed(.emptyReceipt, .text("the receipt string holds only whitespace", at: -1))
        }
        return .receipt(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(lane.decoded)[0..<n]))
    }

    /// receipt_sha256 of each record that reached its receipt bytes, and (when verifying) the digest of each parsed
    /// receipt's signed content, all computed together (`ContentHasher.digests`).
    private func hash(_ a: inout Prepared, _ b: inout Prepared) {
        let (receipts, contents) = hasher.digests(digestInput(a), digestInput(b))
        keep(receipts.0, contents.0, &a)
        keep(receipts.1, contents.1, &b)
    }

    /// `hash` of a lone record: its receipt and its content still share the two lanes.
    private func hash(_ a: inout Prepared) {
        let (receipts, contents) = hasher.digests(digestInput(a), nil)
        keep(receipts.0, contents.0, &a)
    }

    private func keep(_ receipt: SHA256Digest?, _ content: ContentDigest?, _ p: inout Prepared) {
        if let receipt {
            receipt.writeHex(into: p.hex)
            p.ctx.receiptSHA256 = UnsafeRawBufferPointer(p.hex)
        }
        p.contentDigest = content
    }

    /// What to hash for a record: its receipt bytes, and its signed content when it will be verified.
    private func digestInput(_ p: Prepared) -> ReceiptDigestInput {
        guard case .receipt(let der) = p.decoded else { return ReceiptDigestInput(receipt: nil) }
        guard let signed = signedContent(p) else { return ReceiptDigestInput(receipt: der) }
        return ReceiptDigestInput(receipt: der, content: signed.content, algorithm: signed.algorithm)
    }

    /// Parses the record's receipt with the lane's parser, keeping the error for `finish`.
    private func parse(_ p: inout Prepared) {
        guard case .receipt(let der) = p.decoded else { return }
        do throws(ReceiptError) {
            try p.parser.parse(der)
        } catch {
            p.parseError = error
        }
    }

    /// The content a parsed receipt's signature covers the digest of, and the digest's algorithm: nil when not
    /// verifying, or when the receipt did not parse or names another algorithm (the verifier then decides alone).
    private func signedContent(_ p: Prepared) -> (content: UnsafeRawBufferPointer, algorithm: DigestAlgorithm)? {
        guard verifier != nil, case .receipt(let der) = p.decoded, p.parseError == nil else { return nil }
        let algorithm = p.parser.container.digestAlgorithm
        guard algorithm != .unsupported else { return nil }
        // The content lies in `der` (the lane's buffer) or in the parser's scratch: both stay as they are until the
        // lane's next record, after this one is finished.
        return (p.parser.withContent(der) { $0 }, algorithm)
    }

    /// Appends the record's row (and transactions): its failure, or the outcome of its receipt.
    private func finish(_ p: Prepared, _ out: inout ColumnBatch, _ counts: inout BatchCounts) {
        var ctx = p.ctx
        switch p.decoded {
        case .failed(let code, let detail): fail(&out, &counts, &ctx, code, detail)
        case .receipt(let der): processReceipt(der, p, &out, &counts, &ctx)
        }
    }

    /// The text of the `--id-field` value: a string (unescaped into `scratch`), a number's literal, or a boolean.
    private func recordID(
        _ v: JSONValue, _ line: UnsafeRawBufferPointer, _ scratch: UnsafeMutableRawBufferPointer
    ) -> UnsafeRawBufferPointer? {
        switch v {
        case .string(let ref):
            let raw = UnsafeRawBufferPointer(rebasing: line[ref.range])
            guard ref.escaped else { return raw }
            let n = JSONString.unescape(raw, into: scratch)
            return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[0..<n])
        case .number(let range):
            return UnsafeRawBufferPointer(rebasing: line[range])
        case .bool(let b):
            let s: StaticString = b ? "true" : "false"
            return UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
        case .absent, .null, .container:
            return nil
        }
    }

    // MARK: - Receipt bytes to rows

    /// The row of a parsed receipt (`p`, whose receipt bytes are `der`).
    private func processReceipt(
        _ der: UnsafeRawBufferPointer, _ p: Prepared, _ out: inout ColumnBatch, _ counts: inout BatchCounts,
        _ ctx: inout RowContext
    ) {
        let parser = p.parser
        parser.withContent(der) { payload in
            let fields = parser.fields
            var verdict = Verdict()
            if let e = p.parseError {
                verdict.reject(e.code, e.code.status, Detail(e))
            } else {
                check(der, payload, fields, parser, p.contentDigest, &verdict)
            }
            let digest = parser.container.digestAlgorithm
            // Receipt columns stay null when the container could not be read (contract: "null otherwise").
            let decoded = parser.reachedPayload ? fields : nil
            appendReceipt(
                &out.receipts, ctx, verdict, payload: payload, fields: decoded,
                digest: parser.reachedPayload ? digest : nil)
            counts.count(verdict.status, verdict.code)
            if verdict.status == .valid {
                appendTransactions(&out.transactions, ctx, payload: payload, fields: fields)
            }
            if renderNDJSON {
                // What was decoded is shown for rejected receipts too, unless the container itself was unreadable.
                appendNDJSON(&out, receipt: decoded != nil ? parser.materialize(der) : nil)
            }
        }
    }

    /// The outcome for one receipt so far.
    struct Verdict {
        var status = ReceiptStatus.valid
        var code: ErrorCode? = nil
        var detail = Detail.none
        var verified = false
        var signer: String? = nil

        mutating func reject(_ c: ErrorCode, _ s: ReceiptStatus, _ d: Detail) {
            guard code == nil else { return }
            code = c
            status = s
            detail = d
            verified = false
        }
    }

    /// Verification (unless `--no-verify`), then the environment and bundle policies.
    private func check(
        _ der: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer, _ fields: ReceiptFields,
        _ parser: ReceiptParser, _ contentDigest: ContentDigest?, _ verdict: inout Verdict
    ) {
        if let verifier {
            let created = fields.receiptCreationDate
            let outcome = verifier.verify(
                der: der, container: parser.container, content: payload, validationTime: created ?? 0,
                contentDigest: contentDigest)
            verdict.signer = outcome.signerSHA256
            if let code = outcome.error,
                created != nil || (code != .certificateExpired && code != .certificateNotYetValid)
            {
                verdict.reject(code, outcome.status, .string(outcome.detail ?? code.rawValue))
            } else if created == nil {
                // Validity is judged at the creation date only (contract.md); without one it cannot be judged.
                verdict.reject(
                    .malformedAttribute, .malformed,
                    .text("the receipt has no creation date (attribute 12) to judge its certificates at", at: -1))
            } else {
                verdict.verified = true
            }
        } else {
            verdict.signer = signerFingerprint(der, parser.container)
        }
        let type = fields.receiptType.flatMap { r -> UnsafeRawBufferPointer? in
            r.upperBound <= payload.count ? UnsafeRawBufferPointer(rebasing: payload[r]) : nil
        }
        if let status = config.environment.rejection(receiptType: type) {
            verdict.reject(
                .wrongEnvironment, status,
                status == .sandboxReceiptInProduction
                    ? .text("a sandbox receipt where --environment production was required", at: -1)
                    : .text("a production receipt where --environment sandbox was required", at: -1))
        }
        if !bundleIDs.isEmpty {
            let bundle = fields.bundleID.flatMap { r -> UnsafeRawBufferPointer? in
                r.upperBound <= payload.count ? UnsafeRawBufferPointer(rebasing: payload[r]) : nil
            }
            let allowed = bundle.map { b in bundleIDs.contains { $0.elementsEqual(b) } } ?? false
            if !allowed {
                verdict.reject(
                    .wrongBundleID, .notAuthenticated,
                    .text("the receipt is for an app not named by --bundle-id", at: -1))
            }
        }
        // quantity, product_type and cancellation_reason are int32 columns (contract.md): a value outside that
        // range would become null without a word, so the receipt is reported as malformed instead.
        for k in 0..<fields.inAppCount {
            let e = fields.inApp[k]
            guard Self.fitsInt32(e.quantity), Self.fitsInt32(e.productType), Self.fitsInt32(e.cancellationReason)
            else {
                verdict.reject(
                    .malformedAttribute, .malformed,
                    .text("an in-app quantity, product type or cancellation reason does not fit 32 bits", at: -1))
                break
            }
        }
    }

    @inline(__always) static func fitsInt32(_ v: Int64?) -> Bool {
        guard let v else { return true }
        return v >= Int64(Int32.min) && v <= Int64(Int32.max)
    }

    /// With `--no-verify`: the hex SHA-256 of the embedded certificate the SignerInfo names, found by issuer and
    /// serial number, without checking anything.
    private func signerFingerprint(_ der: UnsafeRawBufferPointer, _ c: SignedDataView) -> String? {
        guard c.signerSerial.upperBound <= der.count, c.signerIssuer.upperBound <= der.count else { return nil }
        let serial = der[c.signerSerial]
        let issuer = der[c.signerIssuer]
        for tlv in c.certificates where tlv.upperBound <= der.count {
            guard let cert = try? CertificateView.parse(der, tlv) else { continue }
            if der[cert.serial].elementsEqual(serial) && der[cert.issuer].elementsEqual(issuer) {
                return hasher.sha256(UnsafeRawBufferPointer(rebasing: der[tlv])).hex
            }
        }
        return nil
    }

    /// A row for a record rejected before its receipt could be parsed: only the record's identity is known.
    private func fail(
        _ out: inout ColumnBatch, _ counts: inout BatchCounts, _ ctx: inout RowContext, _ code: ErrorCode,
        _ detail: Detail
    ) {
        var verdict = Verdict()
        verdict.reject(code, code.status, detail)
        appendReceipt(&out.receipts, ctx, verdict, payload: nil, fields: nil, digest: nil)
        counts.count(verdict.status, code)
        if renderNDJSON { appendNDJSON(&out, receipt: nil) }
    }

    /// Renders the receipts row just appended (status, error, source, line, record id) with the decoded receipt,
    /// through the same renderer as `inspect`, as one NDJSON line.
    private func appendNDJSON(_ out: inout ColumnBatch, receipt: Receipt?) {
        typealias C = ReceiptsColumns
        let t = out.receipts
        let r = t.rowCount - 1
        let code = t.strings[C.errorCode][r].flatMap { ErrorCode(rawValue: $0) }
        let record = VerifyReceiptJSON.Record(
            source: t.strings[C.source][r] ?? "", line: t.int64s[C.line].values[r], recordID: t.strings[C.recordID][r])
        VerifyReceiptJSON.render(
            receipt: receipt, status: t.int32s[C.status].values[r], error: code.map { ReceiptError($0) },
            detail: t.strings[C.errorDetail][r], record: record, into: &out.ndjson)
        out.ndjson.append(0x0A)
    }

    // MARK: - Rows

    private func appendReceipt(
        _ t: inout ColumnTable, _ ctx: RowContext, _ v: Verdict, payload: UnsafeRawBufferPointer?,
        fields: ReceiptFields?, digest: DigestAlgorithm?
    ) {
        typealias C = ReceiptsColumns
        t.appendRow { w in
            w.string(C.source, ctx.source)
            w.int64(C.line, Int64(ctx.line))
            w.string(C.recordID, ctx.recordID)
            w.int32(C.status, v.status.rawValue)
            if let code = v.code {
                w.string(C.errorCode, code.rawValue)
            } else {
                w.null(string: C.errorCode)
            }
            w.string(C.errorDetail, detail: v.detail, code: v.code)
            w.bool(C.verified, v.verified)
            let p = payload ?? UnsafeRawBufferPointer(start: nil, count: 0)
            w.string(C.receiptType, fields?.receiptType, in: p)
            w.string(C.bundleID, fields?.bundleID, in: p)
            w.string(C.applicationVersion, fields?.applicationVersion, in: p)
            w.string(C.originalApplicationVersion, fields?.originalApplicationVersion, in: p)
            w.int64(C.appItemID, fields?.appItemID)
            w.int64(C.downloadID, fields?.downloadID)
            w.int64(C.versionExternalIdentifier, fields?.versionExternalIdentifier)
            w.int64(C.receiptCreationDate, fields?.receiptCreationDate)
            w.int64(C.originalPurchaseDate, fields?.originalPurchaseDate)
            w.int64(C.expirationDate, fields?.expirationDate)
            w.int32(C.inAppCount, fields.map { Int32(clamping: $0.inAppCount) })
            switch digest {
            case .sha1?: w.string(C.digestAlgorithm, "sha1" as StaticString)
            case .sha256?: w.string(C.digestAlgorithm, "sha256" as StaticString)
            default: w.null(string: C.digestAlgorithm)
            }
            w.string(C.signerSHA256, v.signer)
            w.string(C.receiptSHA256, ctx.receiptSHA256)
        }
    }

    private func appendTransactions(
        _ t: inout ColumnTable, _ ctx: RowContext, payload p: UnsafeRawBufferPointer, fields f: ReceiptFields
    ) {
        typealias C = TransactionsColumns
        let n = f.inAppCount
        precondition(n <= f.inApp.count, "more in-app entries counted than decoded")
        // Column by column over the receipt's entries (ColumnBlockWriter), reading them in place.
        f.inApp.withUnsafeBufferPointer { entries in
            t.appendRows(n) { w in
                let line = Int64(ctx.line)
                w.string(C.source) { _ in ctx.source }
                w.int64(C.line) { _ in line }
                w.string(C.recordID) { _ in ctx.recordID }
                // Non-nullable in the schema: an absent value is written as an empty string.
                let bundle = Self.text(f.bundleID ?? 0..<0, in: p)
                let type = Self.text(f.receiptType ?? 0..<0, in: p)
                w.string(C.bundleID) { _ in bundle }
                w.string(C.receiptType) { _ in type }
                w.int32(C.quantity) { i in Self.narrow(entries[i].quantity) }
                w.string(C.productID) { i in Self.text(entries[i].productID ?? 0..<0, in: p) }
                w.string(C.transactionID) { i in Self.text(entries[i].transactionID ?? 0..<0, in: p) }
                w.string(C.originalTransactionID) { i in Self.text(entries[i].originalTransactionID, in: p) }
                w.int64(C.purchaseDate) { i in entries[i].purchaseDate }
                w.int64(C.originalPurchaseDate) { i in entries[i].originalPurchaseDate }
                w.int64(C.expiresDate) { i in entries[i].expiresDate }
                w.int64(C.cancellationDate) { i in entries[i].cancellationDate }
                w.int64(C.webOrderLineItemID) { i in entries[i].webOrderLineItemID }
                w.bool(C.isTrialPeriod) { i in entries[i].isTrialPeriod.map { $0 != 0 } }
                w.bool(C.isInIntroOfferPeriod) { i in entries[i].isInIntroOfferPeriod.map { $0 != 0 } }
                w.string(C.promotionalOfferID) { i in Self.text(entries[i].promotionalOfferID, in: p) }
                w.int32(C.productType) { i in Self.narrow(entries[i].productType) }
                w.int32(C.cancellationReason) { i in Self.narrow(entries[i].cancellationReason) }
            }
        }
    }
}
