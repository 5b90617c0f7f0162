import Foundation
import ReceiptDER
import ReceiptIO
import ReceiptModel
import ReceiptSynth
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// "No input makes work grow faster than linearly in its size": for each family of hostile inputs, the work at
/// sizes n and 8n. Linear work grows 8 times; quadratic work would grow 64 times.
///
/// Instruction counters are not available here (no PMU in the VM: `perf_event_open` fails), so the measure is this
/// thread's CPU time (not wall time, so other processes on a loaded CI do not count), the minimum of several
/// trials, with a bound far from both linear and quadratic: t(8n) < 24 t(n).
@Suite(.serialized)
struct LinearWorkTests {
    /// This thread's CPU time in seconds.
    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// The least CPU time of `trials` runs of `body` repeated `reps` times.
    static func cost(reps: Int, trials: Int = 3, _ body: () -> Void) -> Double {
        body()  // warm: buffers grown, pages touched
        var best = Double.infinity
        for _ in 0..<trials {
            let t0 = threadCPU()
            for _ in 0..<reps { body() }
            best = min(best, threadCPU() - t0)
        }
        return best
    }

    /// Measures `work(input(n))` for n and 8n and checks the growth. `reps` makes the smallest run long enough
    /// (some milliseconds) for the clock's resolution not to matter.
    static func expectLinear<Input>(
        _ name: String, base n: Int, reps: Int, input: (Int) -> Input, _ work: (Input) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        // n and 8n: linear work grows 8x, quadratic 64x. The bound sits far from both, so that a loaded CI machine
        // (caches, page faults, other processes) cannot fail a linear algorithm and a quadratic one cannot pass.
        let inputs = [n, 8 * n].map(input)
        let t = inputs.map { i in cost(reps: reps) { work(i) } }
        let r8 = t[1] / t[0]
        print("linear: \(name): n=\(n) \(String(format: "%.4f", t[0])) s, 8n x\(String(format: "%.2f", r8))")
        #expect(t[0] > 0, sourceLocation: sourceLocation)
        #expect(r8 < 24, "\(name): 8 times the input multiplied the work by \(r8)", sourceLocation: sourceLocation)
    }

    /// Parses `der` and returns the error code (nil when it parsed).
    static func parse(_ parser: ReceiptParser, _ der: [UInt8]) -> ErrorCode? {
        der.withUnsafeBytes { buf in
            do throws(ReceiptError) {
                try parser.parse(buf)
                return nil
            } catch {
                return error.code
            }
        }
    }

    // MARK: - DER

    @Test func tinyAttributesParseInLinearTime() {
        let parser = ReceiptParser()
        Self.expectLinear(
            "DER: n tiny attributes", base: 20_000, reps: 2,
            input: { Hostile.signed(Hostile.manyTinyAttributes($0)) }
        ) { der in
            #expect(Self.parse(parser, der) == nil)
        }
    }

    @Test func oneByteContentChunksParseInLinearTime() {
        // BER with the content split into 1-byte chunks: 3 bytes of framing per payload byte, all concatenated.
        let parser = ReceiptParser()
        Self.expectLinear(
            "BER: content in 1-byte chunks", base: 4_000, reps: 1,
            input: {
                ReceiptSigner.sign(
                    payload: Hostile.manyTinyAttributes($0), identity: Hostile.pki.identity(.valid),
                    options: .init(form: .berIndefinite(chunkSize: 1)))
            }
        ) { der in
            #expect(Self.parse(parser, der) == nil)
        }
    }

    @Test func indefiniteLengthAttributesParseInLinearTime() {
        // Every attribute with an indefinite length: the reader walks each one to find its end, then reads it.
        let parser = ReceiptParser()
        let attribute: [UInt8] = [0x30, 0x80, 0x02, 0x01, 0x64, 0x02, 0x01, 0x01, 0x04, 0x00, 0x00, 0x00]
        Self.expectLinear(
            "BER: n indefinite-length attributes", base: 20_000, reps: 1,
            input: { n in
                var payload: [UInt8] = [0x31, 0x80]
                payload += Hostile.basePayload().attributes.flatMap { $0 }
                for _ in 0..<n { payload += attribute }
                return Hostile.signed(payload + [0x00, 0x00])
            }
        ) { der in
            #expect(Self.parse(parser, der) == nil)
        }
    }

    @Test func deepIndefiniteNestsAreWalkedInLinearTime() {
        // The most work per byte the reader allows: n sibling nests, each 30 indefinite levels deep (just under the
        // depth limit) inside one indefinite ContentInfo, so finding each end walks every level.
        let parser = ReceiptParser()
        let nest = Hostile.indefiniteNesting(30)
        Self.expectLinear(
            "BER: n nests 30 deep", base: 4_000, reps: 1,
            input: { n in
                var b: [UInt8] = [0x30, 0x80]
                for _ in 0..<n { b += nest }
                return b + [0x00, 0x00]
            }
        ) { der in
            #expect(Self.parse(parser, der) == .malformedDER)
        }
    }

    @Test func hugeIntegersAreReadInLinearTime() {
        // INTEGERs padded with n sign octets: each is scanned once and rejected.
        let parser = ReceiptParser()
        Self.expectLinear(
            "DER: app_item_id with n padding octets", base: 200_000, reps: 16,
            input: { n in
                var b = Hostile.basePayload()
                b.raw(1, DER.tlv(DER.tagInteger, [UInt8](repeating: 0, count: n) + [0x01]))
                return Hostile.signed(b.encode())
            }
        ) { der in
            // Sign padding is not a 100-digit number: the value is 1 (BER allows it; DER would not).
            #expect(Self.parse(parser, der) == nil)
        }
    }

    // MARK: - NDJSON

    /// Scans `line` as the pipeline does: key scan, then unescape and base64 of the receipt string.
    final class LinePipeline {
        let scanner = NDJSONScanner()
        let unescaped = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 << 20, alignment: 16)
        let decoded = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 << 20, alignment: 16)
        deinit {
            unescaped.deallocate()
            decoded.deallocate()
        }

        func run(_ line: [UInt8]) -> ErrorCode? {
            line.withUnsafeBytes { p in
                let r = scanner.scan(p)
                if let e = r.error { return e }
                var text = UnsafeRawBufferPointer(rebasing: p[r.receipt.range])
                if r.receipt.escaped {
                    let n = JSONString.unescape(text, into: unescaped)
                    text = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(unescaped)[0..<n])
                }
                do throws(ReceiptError) {
                    _ = try Base64.decode(text, into: decoded)
                    return nil
                } catch {
                    return error.code
                }
            }
        }
    }

    @Test func deepJSONGroupsScanInLinearTime() {
        let p = LinePipeline()
        let group = String(repeating: "[", count: 62) + String(repeating: "]", count: 62)
        Self.expectLinear(
            "JSON: n arrays 63 deep", base: 2_000, reps: 2,
            input: { n in
                Array(
                    (#"{"receipt-data":"AAAA","x":["# + Array(repeating: group, count: n).joined(separator: ",") + "]}")
                        .utf8)
            }
        ) { line in
            #expect(p.run(line) == nil)
        }
    }

    @Test func escapedKeysScanInLinearTime() {
        // Every key escaped and one letter short of the receipt key: each is unescaped and compared.
        let p = LinePipeline()
        let key = #""\u0072eceipt-dat\u0061x":0,"#
        Self.expectLinear(
            "JSON: n escaped near-miss keys", base: 4_000, reps: 2,
            input: { n in Array(("{" + String(repeating: key, count: n) + #""receipt-data":"AAAA"}"#).utf8) }
        ) { line in
            #expect(p.run(line) == nil)
        }
    }

    @Test func escapedReceiptStringsDecodeInLinearTime() {
        // Base64 broken by a `\r\n` escape after every character.
        let p = LinePipeline()
        Self.expectLinear(
            "JSON: base64 with n escapes", base: 20_000, reps: 2,
            input: { n in Array((#"{"receipt-data":""# + String(repeating: #"A\r\n"#, count: 4 * n) + #""}"#).utf8) }
        ) { line in
            #expect(p.run(line) == nil)
        }
    }

    // MARK: - Lines

    /// An in-memory byte source.
    final class Bytes: ByteSource {
        let bytes: [UInt8]
        var pos = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var bytesConsumed: Int { pos }
        var knownSize: Int? { bytes.count }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
            let n = min(buffer.count, bytes.count - pos)
            bytes.withUnsafeBytes { b in buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[pos..<(pos + n)])) }
            pos += n
            return n
        }
    }

    /// Reads every batch of `input` and returns the number of records.
    static func readAll(_ input: [UInt8], _ options: ReaderOptions) -> Int {
        let reader = RecordReader(source: Bytes(input), name: "mem", options: options)
        let batch = RecordBatch(capacity: options.batchCapacity, maxRecords: options.maxRecordsPerBatch)
        var records = 0
        while (try? reader.fill(batch)) == true { records += batch.records.count }
        return records
    }

    @Test func tooLargeLinesAreSkippedInLinearTime() {
        // Lines just over a small record limit, so the reader keeps switching in and out of skipping.
        let options = ReaderOptions(maxRecordSize: 4096, batchBytes: 64 << 10)
        let line = [UInt8](repeating: 0x41, count: 4100) + [0x0A]
        Self.expectLinear(
            "reader: n lines over the limit", base: 8_000, reps: 4,
            input: { n in
                var input = [UInt8]()
                input.reserveCapacity(n * line.count)
                for _ in 0..<n { input += line }
                return input
            }
        ) { input in
            #expect(Self.readAll(input, options) == input.count / line.count)
        }
    }
}
