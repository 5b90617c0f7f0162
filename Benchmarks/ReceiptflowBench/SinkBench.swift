import CMallocCount
import Foundation
import ReceiptModel
import ReceiptSink

/// Writer cost: heap allocations and time per row of `sink.write` for a format, on synthetic batches that look like
/// the export's (realistic cardinalities: few bundles and product ids, unique transaction ids and hashes).
struct SinkBenchResult {
    var format: OutputFormat
    var receiptRows: Int
    var transactionRows: Int
    var allocations: UInt64
    var seconds: Double
    var bytes: [String: Int]
}

func makeSinkBenchBatch(receipts: Int, purchasesPerReceipt: Int, seed: UInt64) -> ColumnBatch {
    var rng = seed
    func next() -> UInt64 {
        rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return rng >> 11
    }
    func hex(_ n: Int) -> String {
        var s = ""
        for _ in 0..<(n / 16) { s += String(format: "%016llx", next()) }
        return s
    }
    var batch = ColumnBatch(sequence: 0)
    let bundles = ["com.example.app", "com.example.pro", "com.other.game"]
    let products = (0..<20).map { "com.example.product.\($0)" }
    for i in 0..<receipts {
        let ok = i % 10 != 0
        batch.receipts.append(string: ReceiptsColumns.source, "input-\(i % 3).ndjson.zst")
        batch.receipts.append(int64: ReceiptsColumns.line, Int64(i + 1))
        batch.receipts.append(string: ReceiptsColumns.recordID, "user-\(next() % 1_000_000)")
        batch.receipts.append(int32: ReceiptsColumns.status, ok ? 0 : 21003)
        batch.receipts.append(string: ReceiptsColumns.errorCode, ok ? nil : "bad_signature")
        batch.receipts.append(string: ReceiptsColumns.errorDetail, ok ? nil : "the signature does not match")
        batch.receipts.append(bool: ReceiptsColumns.verified, ok)
        batch.receipts.append(bool: ReceiptsColumns.deviceHashMatches, nil)
        batch.receipts.append(string: ReceiptsColumns.receiptType, "Production")
        let bundle = bundles[Int(next() % 3)]
        batch.receipts.append(string: ReceiptsColumns.bundleID, bundle)
        batch.receipts.append(string: ReceiptsColumns.applicationVersion, "1.\(next() % 30)")
        batch.receipts.append(string: ReceiptsColumns.originalApplicationVersion, "1.0")
        batch.receipts.append(int64: ReceiptsColumns.appItemID, 1_234_567_890)
        batch.receipts.append(int64: ReceiptsColumns.downloadID, Int64(bitPattern: next()))
        batch.receipts.append(int64: ReceiptsColumns.versionExternalIdentifier, Int64(next() % 900_000_000))
        let created = 1_500_000_000_000 + Int64(next() % 300_000_000_000)
        batch.receipts.append(int64: ReceiptsColumns.receiptCreationDate, created)
        batch.receipts.append(int64: ReceiptsColumns.originalPurchaseDate, created - 86_400_000)
        batch.receipts.append(int64: ReceiptsColumns.expirationDate, nil)
        batch.receipts.append(int32: ReceiptsColumns.inAppCount, Int32(purchasesPerReceipt))
        batch.receipts.append(string: ReceiptsColumns.digestAlgorithm, "sha256")
        batch.receipts.append(string: ReceiptsColumns.signerSHA256, String(repeating: "ab", count: 32))
        batch.receipts.append(string: ReceiptsColumns.receiptSHA256, hex(64))
        batch.receipts.append(string: ReceiptsColumns.recordKind, "receipt")
        batch.receipts.append(int32: ReceiptsColumns.jwsIndex, nil)
        batch.receipts.append(string: ReceiptsColumns.userID, nil)
        batch.receipts.rowCount += 1
        guard ok else { continue }
        for _ in 0..<purchasesPerReceipt {
            batch.transactions.append(string: TransactionsColumns.source, "input-\(i % 3).ndjson.zst")
            batch.transactions.append(int64: TransactionsColumns.line, Int64(i + 1))
            batch.transactions.append(string: TransactionsColumns.recordID, "user-\(i)")
            batch.transactions.append(string: TransactionsColumns.bundleID, bundle)
            batch.transactions.append(string: TransactionsColumns.receiptType, "Production")
            batch.transactions.append(int32: TransactionsColumns.quantity, 1)
            batch.transactions.append(string: TransactionsColumns.productID, products[Int(next() % 20)])
            let tid = "\(100_000_000_000_000 + next() % 900_000_000_000_000)"
            batch.transactions.append(string: TransactionsColumns.transactionID, tid)
            batch.transactions.append(string: TransactionsColumns.originalTransactionID, tid)
            let bought = created - Int64(next() % 100_000_000_000)
            batch.transactions.append(int64: TransactionsColumns.purchaseDate, bought)
            batch.transactions.append(int64: TransactionsColumns.originalPurchaseDate, bought)
            batch.transactions.append(
                int64: TransactionsColumns.expiresDate,
                next() % 2 == 0 ? bought + 2_592_000_000 : nil)
            batch.transactions.append(int64: TransactionsColumns.cancellationDate, nil)
            batch.transactions.append(int64: TransactionsColumns.webOrderLineItemID, Int64(next() % 1_000_000_000_000))
            batch.transactions.append(bool: TransactionsColumns.isTrialPeriod, next() % 5 == 0)
            batch.transactions.append(bool: TransactionsColumns.isInIntroOfferPeriod, false)
            batch.transactions.append(string: TransactionsColumns.promotionalOfferID, nil)
            batch.transactions.append(int32: TransactionsColumns.productType, Int32(next() % 4))
            batch.transactions.append(int32: TransactionsColumns.cancellationReason, nil)
            // A receipt's purchase: the columns only a JWS transaction fills are null.
            for c in TransactionsColumns.jwsOnlyStrings { batch.transactions.append(string: c, nil) }
            for c in TransactionsColumns.jwsOnlyInt64s { batch.transactions.append(int64: c, nil) }
            for c in TransactionsColumns.jwsOnlyInt32s { batch.transactions.append(int32: c, nil) }
            batch.transactions.append(bool: TransactionsColumns.isUpgraded, nil)
            batch.transactions.rowCount += 1
        }
    }
    return batch
}

func runSinkBench(format: OutputFormat, batches: Int) -> SinkBenchResult? {
    let dir = NSTemporaryDirectory() + "receiptflow-sinkbench-\(getpid())-\(format.rawValue)"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let template = makeSinkBenchBatch(receipts: 4096, purchasesPerReceipt: 3, seed: 42)
    let sink: BatchSink
    do {
        sink = try makeSink(format: format, directory: dir, metadata: RunMetadata())
    } catch {
        print("sinks: \(error)")
        return nil
    }
    var batch = template
    do {
        // One warm-up batch sizes the reusable buffers; its allocations are not counted.
        try sink.write(batch)
        let before = rf_malloc_count()
        let start = DispatchTime.now().uptimeNanoseconds
        for s in 1...batches {
            batch.sequence = s
            try sink.write(batch)
        }
        try sink.finish()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let allocations = rf_malloc_count() - before
        var bytes: [String: Int] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            let attrs = try? FileManager.default.attributesOfItem(atPath: dir + "/" + name)
            bytes[name] = (attrs?[.size] as? NSNumber)?.intValue ?? 0
        }
        return SinkBenchResult(
            format: format, receiptRows: batches * template.receipts.rowCount,
            transactionRows: batches * template.transactions.rowCount, allocations: allocations, seconds: seconds,
            bytes: bytes)
    } catch {
        sink.abort()
        print("sinks: \(error)")
        return nil
    }
}
