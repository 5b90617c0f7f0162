import Foundation
import ReceiptDER
import ReceiptIO
import ReceiptModel
import ReceiptPipeline
import ReceiptSink
import ReceiptVerify

/// One stage's cost over the whole corpus on one thread.
struct StageStat {
    var name: String
    var label: String
    /// Receipts (records) the stage handled.
    var items: Int
    /// Bytes the stage consumed (its input), for MB/s.
    var bytes: Int
    var cpuSeconds: Double
    var wallSeconds: Double
    var allocations: Int64

    var cpuMicrosPerItem: Double { cpuSeconds * 1e6 / Double(max(items, 1)) }
    /// Receipts per second one core sustains for this stage alone (from CPU time).
    var itemsPerCPUSecond: Double { cpuSeconds > 0 ? Double(items) / cpuSeconds : 0 }
    var megabytesPerCPUSecond: Double { cpuSeconds > 0 ? Double(bytes) / 1e6 / cpuSeconds : 0 }
    var allocationsPerItem: Double { Double(allocations) / Double(max(items, 1)) }
}

/// Accumulates one stage's time and allocations over many batches.
struct StageClock {
    var stat: StageStat
    init(_ name: String, _ label: String) {
        stat = StageStat(name: name, label: label, items: 0, bytes: 0, cpuSeconds: 0, wallSeconds: 0, allocations: 0)
    }

    /// Runs `body` and adds its cost; `body` returns (items, bytes) handled.
    mutating func time(_ body: () throws -> (Int, Int)) rethrows {
        let m0 = Measure.mallocs()
        let c0 = Measure.threadCPU()
        let w0 = Measure.wall()
        let (n, b) = try body()
        stat.wallSeconds += Measure.wall() - w0
        stat.cpuSeconds += Measure.threadCPU() - c0
        stat.allocations += Int64(bitPattern: Measure.mallocs() &- m0)
        stat.items += n
        stat.bytes += b
    }
}

/// Everything the single-thread stage pass found.
struct StageResult {
    var stages: [StageStat]
    var records: Int
    var transactions: Int
    var decompressedBytes: Int
    var verifyCalls: Int
    /// Verifications that reached the RSA check (valid, or rejected after it).
    var rsaVerifications: Int
    /// Verify calls that accepted the receipt, and the heap allocations made inside exactly those calls.
    var validVerifications: Int
    var validVerifyAllocations: Int
    var peakRSSMB: Double
    var cacheMissesDuringTimedPass: Int
    /// Work no exporter can skip (see `Floors`): zstd decompression alone and the digest the signature covers.
    var floors: [StageStat]

    func stage(_ name: String) -> StageStat? { stages.first { $0.name == name } }
}

/// Runs every stage of the pipeline on one thread, batch by batch over the corpus, each stage over the whole
/// batch before the next (so each is timed on its own with the thread CPU clock and its own allocation count):
/// read (zstd + line split), keys (NDJSON scan), base64, hash (receipt_sha256), parse, verify (parse + verify
/// minus parse), worker (the real `RecordProcessor.process`, whose remainder after the stages above is
/// "extract"), write (the real Parquet sink).
///
/// A warm-up pass over the first batch runs first: buffers reach their working size and the chain cache holds
/// the common chains, so the counts are those of a warm pipeline.
final class StagePass {
    let corpus: Corpus
    let anchors: TrustAnchors
    let outDir: String
    let options = ReaderOptions()
    let scanner = NDJSONScanner(field: nil, idField: "id")
    let hasher = ContentHasher()
    let parser = ReceiptParser()
    let cache: ChainCache
    let verifier: ReceiptVerifier
    let processor: RecordProcessor
    let batch: RecordBatch
    let textArena: UnsafeMutableRawBufferPointer
    let derArena: UnsafeMutableRawBufferPointer
    /// Copies of the signed contents of a batch, so that their digests are timed without the parsing around them.
    let contentArena: UnsafeMutableRawBufferPointer
    var contents: [(range: Range<Int>, sha256: Bool)] = []
    let digestOut: UnsafeMutablePointer<UInt8>
    let hex: UnsafeMutableRawBufferPointer
    var texts: [UnsafeRawBufferPointer] = []
    var ders: [UnsafeRawBufferPointer] = []
    var out = ColumnBatch(sequence: 0)
    var counts = BatchCounts()

    init(corpus: Corpus, anchors: TrustAnchors, outDir: String) {
        self.corpus = corpus
        self.anchors = anchors
        self.outDir = outDir
        cache = ChainCache(anchors: anchors)
        verifier = ReceiptVerifier(cache: cache)
        var config = PipelineConfig()
        config.inputs = [corpus.path]
        config.threads = 1
        processor = RecordProcessor(config: config, cache: cache)
        batch = RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch)
        textArena = .allocate(byteCount: options.batchCapacity, alignment: 64)
        derArena = .allocate(byteCount: Base64.maxDecodedCount(options.batchCapacity) + 64, alignment: 64)
        hex = .allocate(byteCount: 64, alignment: 16)
        contentArena = .allocate(byteCount: Base64.maxDecodedCount(options.batchCapacity) + 64, alignment: 64)
        digestOut = .allocate(capacity: 64)
        contents.reserveCapacity(options.maxRecordsPerBatch)
        texts.reserveCapacity(options.maxRecordsPerBatch)
        ders.reserveCapacity(options.maxRecordsPerBatch)
    }

    deinit {
        textArena.deallocate()
        derArena.deallocate()
        hex.deallocate()
        contentArena.deallocate()
        digestOut.deallocate()
    }

    func run() throws -> StageResult {
        try? FileManager.default.removeItem(atPath: outDir)
        let sink = try makeSink(format: .parquet, directory: outDir, metadata: RunMetadata())
        // Warm-up: the first batch through every stage, not counted.
        var scratch = Clocks()
        let warm = try RecordReader.open(corpus.path, options: options)
        _ = try pass(warm, sink, &scratch, maxBatches: 1)

        Measure.resetPeakRSS()
        let misses0 = cache.misses
        var clocks = Clocks()
        let reader = try RecordReader.open(corpus.path, options: options)
        let totals = try pass(reader, sink, &clocks, maxBatches: .max)
        try clocks.write.time {
            try sink.finish()
            return (0, 0)
        }
        let peak = Measure.peakRSSMB()
        var zstd = StageClock("zstd", "zstd decompression alone (like zstd -d >/dev/null)").stat
        let z = try Floors.zstd(path: corpus.path)
        zstd.items = totals.records
        zstd.bytes = z.bytes
        zstd.cpuSeconds = z.cpuSeconds

        // extract = the real worker minus the stages measured on their own.
        var extract = StageClock("extract", "extract (columns: worker minus the stages above)").stat
        let parts = [clocks.keys, clocks.base64, clocks.hash, clocks.parse, clocks.verify].map(\.stat)
        extract.items = clocks.worker.stat.items
        extract.bytes = totals.derBytes
        extract.cpuSeconds = clocks.worker.stat.cpuSeconds - parts.reduce(0) { $0 + $1.cpuSeconds }
        extract.wallSeconds = clocks.worker.stat.wallSeconds - parts.reduce(0) { $0 + $1.wallSeconds }
        extract.allocations = clocks.worker.stat.allocations - parts.reduce(0) { $0 + $1.allocations }
        var scan = StageClock("scan", "input scan (zstd + line split + NDJSON key scan)").stat
        scan.items = clocks.keys.stat.items
        scan.bytes = clocks.read.stat.bytes
        scan.cpuSeconds = clocks.read.stat.cpuSeconds + clocks.keys.stat.cpuSeconds
        scan.wallSeconds = clocks.read.stat.wallSeconds + clocks.keys.stat.wallSeconds
        scan.allocations = clocks.read.stat.allocations + clocks.keys.stat.allocations
        return StageResult(
            stages: [
                scan, clocks.read.stat, clocks.keys.stat, clocks.base64.stat, clocks.hash.stat, clocks.parse.stat,
                clocks.verify.stat, extract, clocks.worker.stat, clocks.write.stat,
            ],
            records: totals.records, transactions: totals.transactions, decompressedBytes: clocks.read.stat.bytes,
            verifyCalls: totals.verifyCalls, rsaVerifications: totals.rsa, validVerifications: totals.valid,
            validVerifyAllocations: totals.validAllocations, peakRSSMB: peak,
            cacheMissesDuringTimedPass: cache.misses - misses0, floors: [zstd, clocks.digest.stat])
    }

    struct Clocks {
        var read = StageClock("read", "zstd + line split")
        var keys = StageClock("keys", "NDJSON key scan (+ unescape)")
        var base64 = StageClock("base64", "base64 decode")
        var hash = StageClock("hash", "receipt_sha256 (SHA-256 of the DER)")
        var parse = StageClock("parse", "parse (PKCS #7 + payload)")
        var digest = StageClock("digest", "signed digest (SHA-1/SHA-256 of the content, two at a time)")
        var parseVerify = StageClock("parse+verify", "")
        var verify = StageClock("verify", "verify (digest + RSA + cached chain)")
        var worker = StageClock("worker", "worker total (RecordProcessor.process)")
        var write = StageClock("write", "write (Parquet sink)")
    }

    struct Totals {
        var records = 0
        var transactions = 0
        var derBytes = 0
        var verifyCalls = 0
        var rsa = 0
        var valid = 0
        var validAllocations = 0
    }

    private func pass(_ reader: RecordReader, _ sink: BatchSink, _ c: inout Clocks, maxBatches: Int) throws -> Totals {
        var t = Totals()
        var batches = 0
        while batches < maxBatches {
            var more = false
            try c.read.time {
                more = try reader.fill(batch)
                var bytes = batch.blankLines
                for r in batch.records { bytes += r.length + 1 }
                return (batch.records.count, bytes)
            }
            guard more else { break }
            batches += 1
            t.records += batch.records.count
            keys(&c.keys)
            base64(&c.base64)
            t.derBytes += ders.reduce(0) { $0 + $1.count }
            c.hash.time {
                // One at a time, as RecordProcessor hashes them.
                var bytes = 0
                for d in ders {
                    hasher.sha256Hex(d, into: hex)
                    bytes += d.count
                }
                return (ders.count, bytes)
            }
            c.parse.time {
                var bytes = 0
                for d in ders {
                    do throws(ReceiptError) { try parser.parse(d) } catch {}
                    bytes += d.count
                }
                return (ders.count, bytes)
            }
            copyContents()
            c.digest.time { signedDigests() }
            c.parseVerify.time { parseAndVerify(&t) }
            c.worker.time {
                processor.process(batch, into: &out, counts: &counts)
                return (batch.records.count, batch.records.reduce(0) { $0 + $1.length })
            }
            t.transactions += out.transactions.rowCount
            try c.write.time {
                try sink.write(out)
                return (batch.records.count, 0)
            }
        }
        // verify = (parse + verify) - parse, over the same receipts.
        c.verify.stat.items = c.parseVerify.stat.items
        c.verify.stat.bytes = c.parseVerify.stat.bytes
        c.verify.stat.cpuSeconds = c.parseVerify.stat.cpuSeconds - c.parse.stat.cpuSeconds
        c.verify.stat.wallSeconds = c.parseVerify.stat.wallSeconds - c.parse.stat.wallSeconds
        c.verify.stat.allocations = c.parseVerify.stat.allocations - c.parse.stat.allocations
        return t
    }

    /// Untimed: parses each receipt again and copies its signed content (SHA-1 or SHA-256) into the arena, then
    /// orders the contents SHA-1 first (`signedDigests` pairs neighbours of one algorithm).
    private func copyContents() {
        contents.removeAll(keepingCapacity: true)
        var cursor = 0
        for d in ders {
            do throws(ReceiptError) { try parser.parse(d) } catch { continue }
            let alg = parser.container.digestAlgorithm
            guard alg == .sha1 || alg == .sha256 else { continue }
            parser.withContent(d) { content in
                // In range: contents are parts of the batch's DERs, which fit the arena together.
                let dst = UnsafeMutableRawBufferPointer(rebasing: contentArena[cursor..<(cursor + content.count)])
                dst.copyMemory(from: content)
                contents.append((cursor..<(cursor + content.count), alg == .sha256))
                cursor += content.count
            }
        }
        let sha1 = contents.filter { !$0.sha256 }
        let sha256 = contents.filter { $0.sha256 }
        contents.removeAll(keepingCapacity: true)
        contents.append(contentsOf: sha1)
        contents.append(contentsOf: sha256)
    }

    /// The NDJSON key scan of every record: the receipt string's bytes, unescaped into the arena when needed.
    private func keys(_ clock: inout StageClock) {
        texts.removeAll(keepingCapacity: true)
        clock.time {
            var cursor = 0
            var bytes = 0
            for i in batch.records.indices where !batch.records[i].tooLarge {
                batch.withRecord(i) { line in
                    bytes += line.count
                    let r = scanner.scan(line)
                    guard r.error == nil else { return }
                    let raw = UnsafeRawBufferPointer(rebasing: line[r.receipt.range])
                    if r.receipt.escaped {
                        // In range: unescaping never lengthens, and the arena holds a whole batch.
                        let dst = UnsafeMutableRawBufferPointer(rebasing: textArena[cursor...])
                        let n = JSONString.unescape(raw, into: dst)
                        texts.append(
                            UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(textArena)[cursor..<cursor + n]))
                        cursor += n
                    } else {
                        texts.append(raw)
                    }
                }
            }
            return (batch.records.count, bytes)
        }
    }

    /// Base64 of every receipt string into the DER arena.
    private func base64(_ clock: inout StageClock) {
        ders.removeAll(keepingCapacity: true)
        clock.time {
            var cursor = 0
            var bytes = 0
            for text in texts {
                bytes += text.count
                let dst = UnsafeMutableRawBufferPointer(
                    rebasing: derArena[cursor..<(cursor + Base64.maxDecodedCount(text.count))])
                do throws(ReceiptError) {
                    let n = try Base64.decode(text, into: dst)
                    if n > 0 {
                        ders.append(
                            UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(derArena)[cursor..<cursor + n]))
                    }
                    cursor += n
                } catch {}
            }
            return (texts.count, bytes)
        }
    }
}
