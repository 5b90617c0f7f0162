import CZstd
import Foundation

/// Decompresses a whole zstd file (all frames) for tests; the project's streaming reader lives in ReceiptIO.
enum Zstd {
    static func decompress(_ url: URL) throws -> [UInt8] {
        let input = [UInt8](try Data(contentsOf: url))
        let stream = ZSTD_createDStream()!
        defer { ZSTD_freeDStream(stream) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: ZSTD_DStreamOutSize())
        let cap = buf.count
        try input.withUnsafeBytes { src in
            var inb = ZSTD_inBuffer(src: src.baseAddress, size: src.count, pos: 0)
            var produced = cap
            // Keep going while input remains or the last call filled the buffer (more output may be pending).
            while inb.pos < inb.size || produced == cap {
                produced = 0
                let r = buf.withUnsafeMutableBytes { dst in
                    var outb = ZSTD_outBuffer(dst: dst.baseAddress, size: cap, pos: 0)
                    let r = ZSTD_decompressStream(stream, &outb, &inb)
                    produced = outb.pos
                    return r
                }
                if ZSTD_isError(r) != 0 { throw CocoaError(.fileReadCorruptFile) }
                out += buf[0..<produced]
            }
        }
        return out
    }
}
