import Foundation
import ReceiptIO
import ReceiptModel
import Testing

@Suite struct RawPathTests {
    @Test func validUTF8IsItsOwnTextAndOtherBytesAreEscapedReversibly() {
        #expect(RawPath.escape(Array("plain/ünïcode\\x41.ndjson".utf8)) == nil)
        let cases: [([UInt8], String)] = [
            ([0x69, 0x6E, 0xFF], "in\\xFF"),
            ([0x63, 0x61, 0x66, 0xE9, 0x2F, 0x78], "caf\\xE9/x"),
            ([0xC3, 0x28], "\\xC3("),
            ([0xE2, 0x82], "\\xE2\\x82"),
            ([0x5C, 0x80, 0xC3, 0xA9], "\\\\\\x80é"),
            ([0xED, 0xA0, 0x80], "\\xED\\xA0\\x80"),
        ]
        for (bytes, escaped) in cases {
            #expect(RawPath.escape(bytes) == escaped)
            let text = RawPath.text(bytes)
            #expect(text == escaped && RawPath.isRaw(text))
            #expect(RawPath.bytes(text) == bytes)
        }
        #expect(RawPath.bytes("not/registered") == Array("not/registered".utf8))
    }

    @Test func aFileWhoseNameIsNotUTF8OpensByItsText() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-rawpath-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in [[0x61, 0xFF], [0xFE, 0xFE, 0x2E, 0x6E], [0x78, 0xC0, 0xAF]] as [[UInt8]] {
            let path = Array(dir.path.utf8) + [0x2F] + name
            let content = Array("line of \(name)\n".utf8)
            var c = path.map { CChar(bitPattern: $0) } + [0]
            let fd = open(&c, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            #expect(fd >= 0)
            _ = content.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            let text = RawPath.text(path)
            #expect(try InputOpener.probe(text) == content.count)
            let source = try InputOpener.open(text)
            var read: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 100)
            while true {
                let n = try buffer.withUnsafeMutableBytes { (p) throws(InputError) -> Int in try source.read(into: p) }
                if n == 0 { break }
                read += buffer[0..<n]
            }
            #expect(read == content)
        }
    }
}
