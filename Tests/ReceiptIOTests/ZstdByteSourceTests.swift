import CZstd
import Foundation
import ReceiptIO
import ReceiptSynth
import Testing

/// Compresses `data` as one zstd frame.
func zstdFrame(_ data: [UInt8], level: Int32 = 3) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: ZSTD_compressBound(data.count))
    let n = out.withUnsafeMutableBytes { o in
        data.withUnsafeBytes { i in ZSTD_compress(o.baseAddress, o.count, i.baseAddress, i.count, level) }
    }
    precondition(ZSTD_isError(n) == 0)
    return Array(out[0..<n])
}

private func drain(_ source: any ByteSource, chunk: Int) throws -> [UInt8] {
    var all: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: chunk)
    while true {
        let n = try buf.withUnsafeMutableBytes { (p) throws(InputError) -> Int in try source.read(into: p) }
        if n == 0 { return all }
        all += buf[0..<n]
    }
}

@Suite struct ZstdByteSourceTests {
    @Test(arguments: [1, 7, 4096, 1 << 20])
    func streamsConcatenatedFramesInAnyChunkSizes(chunk: Int) throws {
        var rng = SplitMix(seed: 3)
        let parts = (0..<4).map { k in (0..<(k * 50_000 + 10)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 16) } }
        let compressed = parts.flatMap { zstdFrame($0) }
        let source = try ZstdByteSource(MemoryByteSource(compressed, chunk: chunk == 1 ? 3 : chunk), name: "t.zst")
        #expect(try drain(source, chunk: chunk) == parts.flatMap { $0 })
        #expect(source.bytesConsumed == compressed.count)
    }

    @Test func failsClearlyOnATruncatedFrame() throws {
        let frame = zstdFrame((0..<100_000).map { UInt8($0 % 251) })
        let source = try ZstdByteSource(MemoryByteSource(Array(frame.dropLast(10))), name: "cut.zst")
        #expect(throws: InputError.self) { try drain(source, chunk: 4096) }
    }

    @Test func failsClearlyOnGarbageAfterAFrame() throws {
        let data = zstdFrame(Array("hello\n".utf8)) + Array("not zstd at all".utf8)
        let source = try ZstdByteSource(MemoryByteSource(data), name: "junk.zst")
        #expect(throws: InputError.self) { try drain(source, chunk: 4096) }
    }

    @Test func readerCutsLinesAcrossFrameBoundariesFromAFile() throws {
        // Frames split in the middle of a line: the reader must not see the frame edges.
        let text = (1...2000).map { "{\"id\":\($0),\"receipt\":\"QUJD\"}" }.joined(separator: "\n") + "\n"
        let bytes = Array(text.utf8)
        let cuts = [0, 777, 13_001, 40_000, bytes.count]
        let compressed = (0..<4).flatMap { zstdFrame(Array(bytes[cuts[$0]..<cuts[$0 + 1]])) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rf-io-\(UUID().uuidString).data")
        try Data(compressed).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let options = ReaderOptions(maxRecordSize: 1024, batchBytes: 8192)
        let got = try readAll(try RecordReader.open(url.path, options: options), options)
        #expect(got.records.count == 2000)
        #expect(got.records.last?.text == "{\"id\":2000,\"receipt\":\"QUJD\"}")
        #expect(got.records.map(\.line) == Array(1...2000))
        #expect(got.inputBytes == compressed.count)
        #expect(got.formats.allSatisfy { $0 == .ndjson })
    }
}
