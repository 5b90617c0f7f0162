import COpenSSL
import CZstd
import Foundation
import ReceiptDER
import ReceiptVerify

/// The work no implementation of the export can skip on a given corpus, measured on one thread in the same run:
/// decompressing the input, the SHA-256 of every receipt (`receipt_sha256` is a contract column), the digest the
/// signature covers, and the RSA verification itself. Their sum bounds the end-to-end / ceiling ratio from above.
enum Floors {
    /// zstd decompression alone, the way `zstd -d > /dev/null` does it: the whole file through
    /// `ZSTD_decompressStream` into one 128 KB buffer that stays in cache, nothing else done with the bytes.
    /// Returns thread CPU seconds and decompressed bytes.
    static func zstd(path: String) throws -> (cpuSeconds: Double, bytes: Int) {
        let input = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let ds = ZSTD_createDStream() else { throw BenchError("cannot create a zstd stream") }
        defer { ZSTD_freeDStream(ds) }
        ZSTD_initDStream(ds)
        let outCount = 128 << 10
        let out = UnsafeMutableRawPointer.allocate(byteCount: outCount, alignment: 64)
        defer { out.deallocate() }
        var total = 0
        let c0 = Measure.threadCPU()
        try input.withUnsafeBytes { (src: UnsafeRawBufferPointer) throws in
            var inb = ZSTD_inBuffer(src: src.baseAddress, size: src.count, pos: 0)
            while inb.pos < inb.size {
                var o = ZSTD_outBuffer(dst: out, size: outCount, pos: 0)
                let r = ZSTD_decompressStream(ds, &o, &inb)
                if ZSTD_isError(r) != 0 { throw BenchError("corpus is not valid zstd") }
                total += o.pos
            }
        }
        return (Measure.threadCPU() - c0, total)
    }

    /// The digest an RSA signature covers: SHA-256 or SHA-1 of `content`, one call of OpenSSL's one-shot API
    /// (for a content with no partner of its algorithm; see `signedDigestPair`).
    @inline(__always)
    static func signedDigest(_ content: UnsafeRawBufferPointer, sha256: Bool, into out: UnsafeMutablePointer<UInt8>) {
        let p = content.baseAddress?.assumingMemoryBound(to: UInt8.self)
        if sha256 { _ = SHA256(p, content.count, out) } else { _ = SHA1(p, content.count, out) }
    }

    /// The digests of two contents of one algorithm, through OpenSSL's EVP interface one after the other, as the
    /// exporter computes them.
    @inline(__always)
    static func signedDigestPair(
        _ hasher: ContentHasher, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, sha256: Bool,
        into out: UnsafeMutablePointer<UInt8>
    ) {
        let alg: DigestAlgorithm = sha256 ? .sha256 : .sha1
        let da = hasher.digest(alg, a)
        let db = hasher.digest(alg, b)
        // One byte of each kept, so the work cannot be optimized away.
        out[0] = da.map { d in d.withUnsafeBytes { $0[0] } } ?? 0
        out[1] = db.map { d in d.withUnsafeBytes { $0[0] } } ?? 0
    }
}
