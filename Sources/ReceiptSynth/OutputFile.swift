import CZstd
import Foundation

/// A file written through a temporary name and renamed on `finish()`, so it appears complete or not at all;
/// zstd-compressed (one streamed frame) when `compressed` is true.
final class OutputFile: @unchecked Sendable {
    let url: URL
    private let tmp: URL
    private let handle: FileHandle
    private let cctx: OpaquePointer?
    private var pending: [UInt8] = []
    private var out = [UInt8](repeating: 0, count: ZSTD_CStreamOutSize())
    private(set) var bytesIn = 0

    init(url: URL, compressed: Bool, level: Int32 = 3) throws(SynthError) {
        self.url = url
        tmp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        guard FileManager.default.createFile(atPath: tmp.path, contents: nil),
            let h = FileHandle(forWritingAtPath: tmp.path)
        else { throw SynthError("cannot create \(tmp.path): check that the folder exists and is writable") }
        handle = h
        if compressed {
            cctx = ZSTD_createCCtx()
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
        } else {
            cctx = nil
        }
    }

    deinit { if let c = cctx { ZSTD_freeCCtx(c) } }

    func write(_ bytes: [UInt8]) throws(SynthError) {
        bytesIn += bytes.count
        pending += bytes
        if pending.count >= 1 << 20 { try flush(end: false) }
    }

    func write(_ s: String) throws(SynthError) { try write(Array(s.utf8)) }

    private func flush(end: Bool) throws(SynthError) {
        guard let cctx else {
            try put(pending)
            pending.removeAll(keepingCapacity: true)
            return
        }
        var failure: String? = nil
        var chunks: [[UInt8]] = []
        let outCap = out.count
        pending.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                var input = ZSTD_inBuffer(src: src.baseAddress, size: src.count, pos: 0)
                while true {
                    var output = ZSTD_outBuffer(dst: dst.baseAddress, size: outCap, pos: 0)
                    let r = ZSTD_compressStream2(cctx, &output, &input, end ? ZSTD_e_end : ZSTD_e_continue)
                    if ZSTD_isError(r) != 0 {
                        failure = String(cString: ZSTD_getErrorName(r))
                        return
                    }
                    // output.pos <= outCap: zstd never writes past the buffer it was given.
                    chunks.append(Array(UnsafeRawBufferPointer(rebasing: dst[0..<output.pos])))
                    if end ? r == 0 : input.pos == input.size { return }
                }
            }
        }
        if let f = failure { throw SynthError("zstd compression failed: \(f)") }
        for c in chunks where !c.isEmpty { try put(c) }
        pending.removeAll(keepingCapacity: true)
    }

    private func put(_ bytes: [UInt8]) throws(SynthError) {
        do { try handle.write(contentsOf: Data(bytes)) } catch {
            throw SynthError("cannot write \(tmp.path): \(error)")
        }
    }

    /// Flushes, closes and renames the file into place.
    func finish() throws(SynthError) {
        try flush(end: true)
        do { try handle.close() } catch { throw SynthError("cannot close \(tmp.path): \(error)") }
        guard rename(tmp.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(tmp.path)
            throw SynthError("cannot rename \(tmp.path) to \(url.path): \(reason)")
        }
    }

    /// Removes the temporary file after a failure.
    func abort() {
        try? handle.close()
        try? FileManager.default.removeItem(at: tmp)
    }
}
