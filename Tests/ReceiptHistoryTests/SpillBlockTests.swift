import Foundation
import Testing

@testable import ReceiptHistory
@testable import ReceiptModel

/// Spill files: compact purchase records in compressed blocks that read back exactly, damage noticed, and a part's
/// spill of another layout refused on resume.
@Suite struct SpillBlockTests {
    static func temporaryFolder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("rf-block-\(UUID().uuidString)").path
    }

    /// A purchase with every fact set, far-apart dates and a cancellation.
    static func fullRecord(_ n: Int) -> PurchaseRecord {
        var facts = PurchaseFacts()
        facts.environment = .sandbox
        var text: [UInt8] = []
        func span(_ s: String) -> TextSpan {
            defer { text += Array(s.utf8) }
            return TextSpan(offset: Int32(text.count), count: Int32(s.utf8.count))
        }
        facts.bundleID = span("com.example.app")
        facts.transactionID = span("10000000\(n)")
        facts.originalTransactionID = span("10000000\(n / 3)")
        facts.productID = span("com.example.app.monthly")
        facts.quantity = Int32.min
        facts.purchaseDate = 1_714_521_600_000 + Int64(n)
        facts.originalPurchaseDate = Int64.min
        facts.expiresDate = Int64.max
        facts.webOrderLineItemID = -Int64(n)
        facts.isTrialPeriod = true
        facts.isInIntroOfferPeriod = false
        facts.promotionalOfferID = span("")
        facts.productType = 2
        facts.cancellationDate = 0
        facts.cancellationReason = 1
        let newest = Recency(created: Int64.min, input: 3, line: Int64(n), entry: 2)
        return PurchaseRecord(
            facts: facts, text: text, newest: newest,
            cancelledAt: Recency(created: 1_714_521_600_000, input: 0, line: 7, entry: Int64.max), firstSeen: -5,
            lastSeen: nil, occurrences: Int64(n + 1))
    }

    static func encoded(_ r: PurchaseRecord) -> [UInt8] {
        var w = SpillWriter()
        r.encode(into: &w)
        return w.bytes + r.text
    }

    @Test func purchaseRecordsReadBackExactlyThroughCompressedBlocks() throws {
        let folder = Self.temporaryFolder()
        try makeDirectory(folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let codec = try SpillBlockCodec()
        let file = try SpillAppender(path: folder + "/p.run", codec: codec)
        let records = (0..<3_000).map(Self.fullRecord)
        var w = SpillWriter()
        var scratch = SpillWriter()
        var key: [UInt8] = []
        var raw = 0
        for r in records {
            appendFramed(r, into: &w, scratch: &scratch, key: &key)
            if w.bytes.count >= SpillFormat.blockBytes {
                raw += w.bytes.count
                try file.append(w.bytes)
                w.bytes.removeAll()
            }
        }
        raw += w.bytes.count
        try file.append(w.bytes)
        try file.close(sync: false)
        let scanner = try SpillScanner<PurchaseRecord>(path: folder + "/p.run", codec: codec)
        var back: [PurchaseRecord] = []
        while let r = try scanner.next() { back.append(r) }
        #expect(back.map(Self.encoded) == records.map(Self.encoded))
        // Repeated ids and close dates: the blocks are a fraction of the records' bytes.
        #expect(file.bytesWritten < Int64(raw / 2))
    }

    @Test func aDamagedBlockIsADamagedSpill() throws {
        let folder = Self.temporaryFolder()
        try makeDirectory(folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let codec = try SpillBlockCodec()
        let path = folder + "/p.run"
        let file = try SpillAppender(path: path, codec: codec)
        var w = SpillWriter()
        var scratch = SpillWriter()
        var key: [UInt8] = []
        for n in 0..<100 { appendFramed(Self.fullRecord(n), into: &w, scratch: &scratch, key: &key) }
        try file.append(w.bytes)
        try file.close(sync: false)
        var bytes = try #require(FileManager.default.contents(atPath: path))
        bytes[bytes.count / 2] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: path))
        let scanner = try SpillScanner<PurchaseRecord>(path: path, codec: codec)
        let error = #expect(throws: HistoryError.self) { while try scanner.next() != nil {} }
        #expect(error?.code == .spillDamaged)
        // Cut inside a block.
        try bytes.prefix(bytes.count - 3).write(to: URL(fileURLWithPath: path))
        let cut = try SpillScanner<PurchaseRecord>(path: path, codec: codec)
        #expect(throws: HistoryError.self) { while try cut.next() != nil {} }
    }

    @Test func aResumedRunRefusesAPartSpillOfAnotherFormat() throws {
        let dir = Self.temporaryFolder()
        try makeDirectory(dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: true)
        let sealed = try first.sealPart(0)
        let formatFile = dir + "/" + sealed + "/" + SpillFormat.versionFile
        #expect(FileManager.default.contents(atPath: formatFile) == Data(SpillFormat.version.utf8))
        try HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: true).adoptPart(sealed)

        try Data("receiptflow-spill 1".utf8).write(to: URL(fileURLWithPath: formatFile))
        let other = #expect(throws: HistoryError.self) {
            try HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: true).adoptPart(sealed)
        }
        #expect(other?.message.contains("written by another build of receiptflow ('receiptflow-spill 1'") == true)
        // A spill from before the format was named has no such file.
        try FileManager.default.removeItem(atPath: formatFile)
        let unnamed = #expect(throws: HistoryError.self) {
            try HistoryCollector(directory: dir, inputs: ["in.ndjson"], resumable: true).adoptPart(sealed)
        }
        #expect(unnamed?.message.contains("no format named") == true)
    }
}
