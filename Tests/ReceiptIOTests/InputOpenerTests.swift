import Foundation
import ReceiptIO
import Testing

@Suite struct InputOpenerTests {
    @Test func detectsZstdByMagicNotByName() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rf-io-\(UUID().uuidString).txt")
        try Data(zstdFrame(Array("QUJD\n".utf8))).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let source = try InputOpener.open(url.path)
        #expect(source is ZstdByteSource)
    }

    @Test func recognizesTheFrameAndSkippableFrameMagics() {
        #expect(InputOpener.isZstd([0x28, 0xB5, 0x2F, 0xFD]))
        #expect(InputOpener.isZstd([0x5A, 0x2A, 0x4D, 0x18]))
        #expect(!InputOpener.isZstd(Array("{\"a\"".utf8)))
        #expect(!InputOpener.isZstd([0x28, 0xB5]))
    }

    @Test func passesPlainFilesThroughIncludingTinyOnes() throws {
        for text in ["", "Q", "QUJD\nQUJD\n"] {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("rf-io-\(UUID().uuidString).b64")
            try Data(text.utf8).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let options = ReaderOptions()
            let got = try readAll(try RecordReader.open(url.path, options: options), options)
            #expect(got.records.map(\.text) == text.split(separator: "\n").map(String.init))
            #expect(got.inputBytes == text.utf8.count)
        }
    }

    @Test func saysWhatToDoWhenAFileIsMissing() {
        #expect {
            _ = try InputOpener.open("/nonexistent/receipts.ndjson")
        } throws: { e in
            "\(e)".contains("cannot open input '/nonexistent/receipts.ndjson'") && "\(e)".contains("check the path")
        }
    }
}
