import CommandArguments
import Foundation
import ReceiptModel
import ReceiptSink

/// The output writers' test harness (`SinkHarness`, not part of the product), used by Tests/python.
///
/// - `SinkHarness write --format F --out DIR|- --receipts FILE [--transactions FILE] [--batch-rows N]
///   [--row-group-rows N] [--page-bytes N] [--max-rows-per-page N] [--dictionary-bytes N] [--input NAME ...]
///   [--trust-anchor-sha256 HEX ...] [--csv-raw]` reads table rows (one JSON object per line, keyed by column name; int64 and
///   timestamp values as decimal strings so they stay exact) and writes them through `makeSink` in batches. For
///   `ndjson` each receipts row is rendered as a verifyReceipt object, with the transactions rows of the same
///   (source, line) as its `in_app`.
/// - `SinkHarness pst [MS ...]` prints `x<TAB>x_ms<TAB>x_pst` for each epoch-milliseconds value (from standard input,
///   one per line, when none is given).
func runSinkHarness(_ args: [String]) -> Int32 {
    guard let mode = args.first else {
        printError("SinkHarness: write | pst")
        return 2
    }
    do {
        switch mode {
        case "write": return try sinkDebugWrite(Array(args.dropFirst()))
        case "pst": return sinkDebugPST(Array(args.dropFirst()))
        default:
            printError("SinkHarness: unknown mode '\(mode)'")
            return 2
        }
    } catch let e as UsageError {
        printError("SinkHarness: \(e.message)")
        return 2
    } catch {
        printError("SinkHarness: \(error)")
        return 1
    }
}

private func sinkDebugPST(_ args: [String]) -> Int32 {
    var values = args
    if values.isEmpty {
        while let l = readLine() {
            if !l.isEmpty { values.append(l) }
        }
    }
    var out: [UInt8] = []
    for v in values {
        guard let ms = Int64(v) else {
            printError("SinkHarness pst: not an integer: \(v)")
            return 2
        }
        CivilTime.appendGMT(epochMillis: ms, into: &out)
        out.append(0x09)
        DecimalText.append(ms, into: &out)
        out.append(0x09)
        LosAngelesTime.appendPST(epochMillis: ms, into: &out)
        out.append(0x0A)
    }
    FileHandle.standardOutput.write(Data(out))
    return 0
}

private func sinkDebugWrite(_ args: [String]) throws -> Int32 {
    let a = try Arguments(
        args, flags: ["--csv-raw"],
        valued: [
            "--format", "--out", "--receipts", "--transactions", "--batch-rows", "--row-group-rows", "--page-bytes",
            "--max-rows-per-page", "--dictionary-bytes", "--input", "--trust-anchor-sha256",
        ],
        repeatable: ["--input", "--trust-anchor-sha256"])
    guard let formatName = a.value("--format"), let format = OutputFormat(rawValue: formatName) else {
        throw UsageError(message: "--format parquet|csv|ndjson is required")
    }
    guard let out = a.value("--out") else { throw UsageError(message: "--out DIR is required") }
    guard let receiptsPath = a.value("--receipts") else { throw UsageError(message: "--receipts FILE is required") }
    var options = SinkOptions()
    if let n = try a.int("--row-group-rows") { options.rowGroupRows = n }
    if let n = try a.int("--page-bytes") { options.pageBytes = n }
    if let n = try a.int("--max-rows-per-page") { options.maxRowsPerPage = n }
    if let n = try a.int("--dictionary-bytes") { options.dictionaryMaxBytes = n }
    options.csvRaw = a.has("--csv-raw")
    let batchRows = max(1, try a.int("--batch-rows") ?? 1000)
    var metadata = RunMetadata()
    metadata.inputs = a.values("--input")
    metadata.trustAnchorSHA256 = a.values("--trust-anchor-sha256")

    let receipts = try readRows(receiptsPath)
    let transactions = try a.value("--transactions").map(readRows) ?? []

    let sink =
        out == "-"
        ? try makeStreamSink(format: format, options: options)
        : try makeSink(format: format, directory: out, metadata: metadata, options: options)
    var inApp: [String: [InAppPurchase]] = [:]
    if format == .ndjson {
        for t in transactions { inApp["\(t["source"] ?? "")\u{0}\(t["line"] ?? "")", default: []].append(purchase(t)) }
    }
    do {
        var r = 0
        var t = 0
        var sequence = 0
        repeat {
            var batch = ColumnBatch(sequence: sequence)
            for row in receipts[r..<min(r + batchRows, receipts.count)] {
                try fill(&batch.receipts, row)
                if format == .ndjson { render(row, inApp, into: &batch.ndjson) }
            }
            for row in transactions[t..<min(t + batchRows, transactions.count)] { try fill(&batch.transactions, row) }
            r = min(r + batchRows, receipts.count)
            t = min(t + batchRows, transactions.count)
            try sink.write(batch)
            sequence += 1
        } while r < receipts.count || t < transactions.count
        try sink.finish()
    } catch {
        sink.abort()
        throw error
    }
    return 0
}

private func readRows(_ path: String) throws -> [[String: Any]] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    var rows: [[String: Any]] = []
    for line in data.split(separator: 0x0A) where !line.isEmpty {
        guard let o = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw UsageError(message: "\(path): a line is not a JSON object")
        }
        rows.append(o)
    }
    return rows
}

/// Appends one row given by column name; absent keys and JSON null are nulls.
private func fill(_ table: inout ColumnTable, _ row: [String: Any]) throws {
    for c in table.schema.columns {
        let v = row[c.name].flatMap { $0 is NSNull ? nil : $0 }
        switch c.kind {
        case .string:
            table.append(string: c.slot, v.map { "\($0)" })
        case .int64, .timestampMillis:
            table.append(int64: c.slot, try v.map { try int64($0, c.name) })
        case .int32, .date:
            table.append(int32: c.slot, try v.map { Int32(try int64($0, c.name)) })
        case .bool:
            table.append(bool: c.slot, v.map { ($0 as? Bool) ?? false })
        }
    }
    table.rowCount += 1
}

private func int64(_ v: Any, _ name: String) throws -> Int64 {
    if let s = v as? String, let n = Int64(s) { return n }
    if let n = v as? NSNumber { return n.int64Value }
    throw UsageError(message: "column \(name): not an integer: \(v)")
}

private func optInt(_ row: [String: Any], _ k: String) -> Int64? {
    guard let v = row[k], !(v is NSNull) else { return nil }
    return try? int64(v, k)
}

private func optString(_ row: [String: Any], _ k: String) -> String? {
    guard let v = row[k], !(v is NSNull) else { return nil }
    return "\(v)"
}

private func purchase(_ t: [String: Any]) -> InAppPurchase {
    var p = InAppPurchase()
    p.quantity = optInt(t, "quantity")
    p.productID = optString(t, "product_id")
    p.transactionID = optString(t, "transaction_id")
    p.originalTransactionID = optString(t, "original_transaction_id")
    p.purchaseDate = optInt(t, "purchase_date")
    p.originalPurchaseDate = optInt(t, "original_purchase_date")
    p.expiresDate = optInt(t, "expires_date")
    p.cancellationDate = optInt(t, "cancellation_date")
    p.webOrderLineItemID = optInt(t, "web_order_line_item_id")
    p.isTrialPeriod = (t["is_trial_period"] as? Bool).map { $0 ? 1 : 0 }
    p.isInIntroOfferPeriod = (t["is_in_intro_offer_period"] as? Bool).map { $0 ? 1 : 0 }
    p.promotionalOfferID = optString(t, "promotional_offer_id")
    p.productType = optInt(t, "product_type")
    p.cancellationReason = optInt(t, "cancellation_reason")
    return p
}

private func render(_ row: [String: Any], _ inApp: [String: [InAppPurchase]], into out: inout [UInt8]) {
    var receipt: Receipt? = nil
    if optString(row, "receipt_type") != nil || optString(row, "bundle_id") != nil {
        var r = Receipt()
        r.receiptType = optString(row, "receipt_type")
        r.appItemID = optInt(row, "app_item_id")
        r.bundleID = optString(row, "bundle_id")
        r.applicationVersion = optString(row, "application_version")
        r.originalApplicationVersion = optString(row, "original_application_version")
        r.downloadID = optInt(row, "download_id")
        r.versionExternalIdentifier = optInt(row, "version_external_identifier")
        r.receiptCreationDate = optInt(row, "receipt_creation_date")
        r.originalPurchaseDate = optInt(row, "original_purchase_date")
        r.expirationDate = optInt(row, "expiration_date")
        r.inApp = inApp["\(row["source"] ?? "")\u{0}\(row["line"] ?? "")"] ?? []
        receipt = r
    }
    let error = optString(row, "error_code").flatMap(ErrorCode.init(rawValue:)).map { ReceiptError($0) }
    let record = VerifyReceiptJSON.Record(
        source: optString(row, "source") ?? "", line: optInt(row, "line") ?? 0, recordID: optString(row, "record_id"))
    VerifyReceiptJSON.render(
        receipt: receipt, status: Int32(optInt(row, "status") ?? 0), error: error, record: record, into: &out)
    out.append(0x0A)
}
