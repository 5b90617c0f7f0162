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
        batch.receipts.strings[ReceiptsColumns.source].append("input-\(i % 3).ndjson.zst")
        batch.receipts.int64s[ReceiptsColumns.line].append(Int64(i + 1))
        batch.receipts.strings[ReceiptsColumns.recordID].append("user-\(next() % 1_000_000)")
        batch.receipts.int32s[ReceiptsColumns.status].append(ok ? 0 : 21003)
        batch.receipts.strings[ReceiptsColumns.errorCode].append(ok ? nil : "bad_signature")
        batch.receipts.strings[ReceiptsColumns.errorDetail].append(ok ? nil : "the signature does not match")
        batch.receipts.bools[ReceiptsColumns.verified].append(ok)
        batch.receipts.strings[ReceiptsColumns.receiptType].append("Production")
        let bundle = bundles[Int(next() % 3)]
        batch.receipts.strings[ReceiptsColumns.bundleID].append(bundle)
        batch.receipts.strings[ReceiptsColumns.applicationVersion].append("1.\(next() % 30)")
        batch.receipts.strings[ReceiptsColumns.originalApplicationVersion].append("1.0")
        batch.receipts.int64s[ReceiptsColumns.appItemID].append(1_234_567_890)
        batch.receipts.int64s[ReceiptsColumns.downloadID].append(Int64(bitPattern: next()))
        batch.receipts.int64s[ReceiptsColumns.versionExternalIdentifier].append(Int64(next() % 900_000_000))
        let created = 1_500_000_000_000 + Int64(next() % 300_000_000_000)
        batch.receipts.int64s[ReceiptsColumns.receiptCreationDate].append(created)
        batch.receipts.int64s[ReceiptsColumns.originalPurchaseDate].append(created - 86_400_000)
        batch.receipts.int64s[ReceiptsColumns.expirationDate].append(nil)
        batch.receipts.int32s[ReceiptsColumns.inAppCount].append(Int32(purchasesPerReceipt))
        batch.receipts.strings[ReceiptsColumns.digestAlgorithm].append("sha256")
        batch.receipts.strings[ReceiptsColumns.signerSHA256].append(String(repeating: "ab", count: 32))
        batch.receipts.strings[ReceiptsColumns.receiptSHA256].append(hex(64))
        batch.receipts.rowCount += 1
        guard ok else { continue }
        for _ in 0..<purchasesPerReceipt {
            batch.transactions.strings[TransactionsColumns.source].append("input-\(i % 3).ndjson.zst")
            batch.transactions.int64s[TransactionsColumns.line].append(Int64(i + 1))
            batch.transactions.strings[TransactionsColumns.recordID].append("user-\(i)")
            batch.transactions.strings[TransactionsColumns.bundleID].append(bundle)
            batch.transactions.strings[TransactionsColumns.receiptType].append("Production")
            batch.transactions.int32s[TransactionsColumns.quantity].append(1)
            batch.transactions.strings[TransactionsColumns.productID].append(products[Int(next() % 20)])
            let tid = "\(100_000_000_000_000 + next() % 900_000_000_000_000)"
            batch.transactions.strings[TransactionsColumns.transactionID].append(tid)
            batch.transactions.strings[TransactionsColumns.originalTransactionID].append(tid)
            let bought = created - Int64(next() % 100_000_000_000)
            batch.transactions.int64s[TransactionsColumns.purchaseDate].append(bought)
            batch.transactions.int64s[TransactionsColumns.originalPurchaseDate].append(bought)
            batch.transactions.int64s[TransactionsColumns.expiresDate].append(
                next() % 2 == 0 ? bought + 2_592_000_000 : nil)
            batch.transactions.int64s[TransactionsColumns.cancellationDate].append(nil)
            batch.transactions.int64s[TransactionsColumns.webOrderLineItemID].append(Int64(next() % 1_000_000_000_000))
            batch.transactions.bools[TransactionsColumns.isTrialPeriod].append(next() % 5 == 0)
            batch.transactions.bools[TransactionsColumns.isInIntroOfferPeriod].append(false)
            batch.transactions.strings[TransactionsColumns.promotionalOfferID].append(nil)
            batch.transactions.int32s[TransactionsColumns.productType].append(Int32(next() % 4))
            batch.transactions.int32s[TransactionsColumns.cancellationReason].append(nil)
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
