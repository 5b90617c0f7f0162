import Foundation
import ReceiptSynth

/// Builders for hostile inputs: raw BER bombs, and receipts signed by the test CA whose payload is hostile, so
/// that the parser has to reach the payload (an unsigned bomb would stop at the container).
enum Hostile {
    /// The test CA, made once per test process; its keys are cached between runs in a folder of its own.
    static let pki: TestPKI = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-hardening-tests-ca")
        do { return try TestPKI.load(directory: dir) } catch { fatalError("cannot make the test CA: \(error)") }
    }()

    /// The test CA's root as a PEM file, for `--trust-anchor`.
    static let rootPEM: String = {
        _ = pki
        return FileManager.default.temporaryDirectory.appendingPathComponent("rf-hardening-tests-ca/root.pem").path
    }()

    /// The app-level attributes of an ordinary valid receipt, created 2020-09-13 (inside the test chain's validity).
    static func basePayload() -> PayloadBuilder {
        var b = PayloadBuilder()
        b.utf8(0, "Production")
        b.utf8(2, "com.example.hostile")
        b.utf8(3, "1.0")
        b.integer(1, 1_234_567)
        b.date(12, 1_600_000_000_000)
        b.utf8(19, "1.0")
        return b
    }

    /// One ordinary in-app purchase.
    static func purchase(_ n: Int) -> PayloadBuilder {
        var p = PayloadBuilder()
        p.integer(1701, 1)
        p.utf8(1702, "com.example.hostile.coins")
        p.utf8(1703, "1000000\(n)")
        p.date(1704, 1_600_000_000_000)
        return p
    }

    /// `payload` signed by the genuine test chain (DER container).
    static func signed(_ payload: [UInt8]) -> [UInt8] {
        ReceiptSigner.sign(payload: payload, identity: pki.identity(.valid))
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { DER.tlv(tag, content) }

    /// `depth` SEQUENCEs with indefinite lengths, each inside the previous: `30 80` ... `00 00`.
    static func indefiniteNesting(_ depth: Int, tag: UInt8 = 0x30) -> [UInt8] {
        var b = [UInt8]()
        b.reserveCapacity(4 * depth)
        for _ in 0..<depth { b += [tag, 0x80] }
        for _ in 0..<depth { b += [0x00, 0x00] }
        return b
    }

    /// `depth` SEQUENCEs with definite lengths, each inside the previous, around an empty innermost one.
    static func definiteNesting(_ depth: Int, tag: UInt8 = 0x30) -> [UInt8] {
        // Headers from the inside out (wrapping the bytes themselves would copy quadratically).
        var headers: [[UInt8]] = []
        var size = 2
        for _ in 0..<depth {
            let h = [tag] + DER.length(size)
            headers.append(h)
            size += h.count
        }
        return headers.reversed().flatMap { $0 } + [tag, 0x00]
    }

    /// An attribute SEQUENCE of `type` with an empty OCTET STRING: 10 bytes for a one-octet type.
    static func tinyAttribute(_ type: UInt8 = 100) -> [UInt8] {
        [0x30, 0x08, 0x02, 0x01, type, 0x02, 0x01, 0x01, 0x04, 0x00]
    }

    /// A payload SET of `count` tiny attributes (after the base attributes when `base` is true).
    static func manyTinyAttributes(_ count: Int, base: Bool = true) -> [UInt8] {
        var content = base ? basePayload().attributes.flatMap { $0 } : []
        content.reserveCapacity(content.count + 10 * count)
        let one = tinyAttribute()
        for _ in 0..<count { content += one }
        return tlv(0x31, content)
    }

    /// A payload with `count` in-app purchases, each an empty SET: 12 bytes apiece.
    static func manyEmptyPurchases(_ count: Int) -> [UInt8] {
        var content = basePayload().attributes.flatMap { $0 }
        let one: [UInt8] = [0x30, 0x0A, 0x02, 0x01, 0x11, 0x02, 0x01, 0x01, 0x04, 0x02, 0x31, 0x00]
        content.reserveCapacity(content.count + one.count * count)
        for _ in 0..<count { content += one }
        return tlv(0x31, content)
    }

    /// An INTEGER of `digits` decimal digits' worth of magnitude (100 digits need 42 octets), never sign-padded.
    static func hugeInteger(decimalDigits digits: Int) -> [UInt8] {
        let octets = Int((Double(digits) * log2(10.0) / 8).rounded(.up))
        return tlv(0x02, [0x7F] + [UInt8](repeating: 0xA5, count: max(octets - 1, 0)))
    }

    /// A zstd frame (RFC 8878) written by hand, so that it can be hostile: `parts` are raw bytes or runs of one byte,
    /// emitted as Raw and RLE blocks (an RLE block of 128 KB is 4 bytes: a decompression bomb). `windowLog` is
    /// what the frame header claims the decoder needs.
    enum ZstdPart {
        case raw([UInt8])
        case run(UInt8, count: Int)
    }

    static func zstdFrame(_ parts: [ZstdPart], windowLog: Int = 20) -> [UInt8] {
        // Frame header: no content size, no checksum, no dictionary; a window descriptor (exponent, mantissa 0).
        var f: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, UInt8((windowLog - 10) << 3)]
        var blocks: [(type: Int, size: Int, content: [UInt8])] = []
        let maxBlock = min(1 << 17, 1 << windowLog)
        for part in parts {
            switch part {
            case .raw(let bytes):
                var i = 0
                while i < bytes.count {
                    let n = min(maxBlock, bytes.count - i)
                    blocks.append((0, n, Array(bytes[i..<(i + n)])))
                    i += n
                }
            case .run(let byte, let count):
                var left = count
                while left > 0 {
                    let n = min(maxBlock, left)
                    blocks.append((1, n, [byte]))
                    left -= n
                }
            }
        }
        for (k, b) in blocks.enumerated() {
            let last = k == blocks.count - 1 ? 1 : 0
            let header = b.size << 3 | b.type << 1 | last  // 3 bytes, little-endian
            f += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16 & 0xFF)] + b.content
        }
        return f
    }

    /// One NDJSON line holding `receipt` as base64 under `receipt-data`, with the id `id`.
    static func line(_ receipt: [UInt8], id: String) -> String {
        #"{"id":"\#(id)","receipt-data":"\#(Data(receipt).base64EncodedString())"}"#
    }
}
