import COpenSSL
import CommandArguments
import Dispatch
import Foundation
import ReceiptModel
import ReceiptPipeline
import ReceiptSink
import ReceiptVerify

let benchUsage = """
    usage: receiptflow bench CORPUS [--threads N] [--format parquet|csv|ndjson] [--min-ratio R] [--json FILE]
                                    [--trust-anchor PATH ...] [--ceiling-seconds S]

    Measures this machine's export throughput on CORPUS against its RSA ceiling. The ceiling is RSA-2048
    signature verifications per second through OpenSSL (`EVP_PKEY_verify` over a SHA-256 digest, one context per
    thread) on as many threads as the export, sampled for S seconds before and after it; the faster sample is
    the ceiling (a disturbed sample can only read slow). The ratio is receipts per second over the ceiling: how
    close the export comes to spending all its time in the one operation no verifier can skip. The export writes
    to a temporary folder, removed afterwards.

    The ratio depends on the CPU as well as on receiptflow: RSA runs much faster on some CPUs (AVX-512) than on
    others while the rest of the export does not, so the same build reads a lower ratio where RSA is fast. Compare
    ratios, and choose --min-ratio, only between runs on the same kind of machine.

      --threads N           worker threads for the export and the ceiling (default: all cores)
      --format F            output format of the export (default parquet)
      --trust-anchor PATH   as for export (default: Apple's built-in roots)
      --ceiling-seconds S   length of each ceiling sample (default 2)
      --min-ratio R         exit with status 1 when the ratio is below R (e.g. 0.45)
      --json FILE           write the results for github-action-benchmark (tool: customBiggerIsBetter):
                            [{"name": ..., "unit": ..., "value": ...}, ...]
    Exit status: 0 measured (and at or above --min-ratio), 1 below --min-ratio or the export failed, 2 usage.
    """

/// `receiptflow bench`: one export of a corpus with the RSA ceiling sampled around it.
func runBench(_ argv: [String]) -> Int32 {
    if argv.contains("-h") || argv.contains("--help") {
        print(benchUsage)
        return 0
    }
    let args: Arguments
    do {
        args = try Arguments(
            argv, flags: [],
            valued: ["--threads", "--format", "--min-ratio", "--json", "--trust-anchor", "--ceiling-seconds"],
            repeatable: ["--trust-anchor"])
    } catch {
        return usageError("bench", error.message)
    }
    guard args.positionals.count == 1, args.positionals[0] != "-" else {
        return usageError("bench", "give one CORPUS file (standard input cannot be measured twice)")
    }
    var config = PipelineConfig()
    config.inputs = args.positionals
    config.threads = max(ProcessInfo.processInfo.activeProcessorCount, 1)
    var format = OutputFormat.parquet
    var minRatio: Double? = nil
    var ceilingSeconds = 2.0
    do throws(UsageError) {
        if let n = try args.int("--threads") {
            guard (1...1024).contains(n) else {
                throw UsageError(.invalidValue, option: "--threads", value: String(n), expected: "1 to 1024")
            }
            config.threads = n
        }
        if let f = args.value("--format") {
            guard let fmt = OutputFormat(rawValue: f) else {
                throw UsageError(.invalidValue, option: "--format", value: f, expected: "parquet, csv or ndjson")
            }
            format = fmt
        }
        if let r = args.value("--min-ratio") {
            guard let v = Double(r), v >= 0 else {
                throw UsageError(.invalidValue, option: "--min-ratio", value: r, expected: "a number")
            }
            minRatio = v
        }
        if let s = args.value("--ceiling-seconds") {
            guard let v = Double(s), v > 0, v <= 600 else {
                throw UsageError(
                    .invalidValue, option: "--ceiling-seconds", value: s, expected: "a number of seconds up to 600")
            }
            ceilingSeconds = v
        }
    } catch {
        return usageError("bench", error.message)
    }
    config.renderNDJSON = format == .ndjson

    let anchors: TrustAnchors
    do throws(TrustAnchorError) {
        anchors = try TrustAnchors.load(
            paths: args.values("--trust-anchor").map { pathByDescriptor($0, directory: false) })
    } catch {
        printError("receiptflow bench: \(error.message)")
        return 1
    }
    if let notice = anchors.notice { printError("receiptflow bench: \(notice)") }
    guard let ceiling = RSACeiling() else {
        printError("receiptflow bench: OpenSSL could not make an RSA-2048 key to measure the ceiling with")
        return 1
    }

    let before = ceiling.sample(threads: config.threads, seconds: ceilingSeconds)
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("receiptflow-bench-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let sink: BatchSink
    do throws(SinkError) {
        var metadata = RunMetadata()
        metadata.inputs = config.inputs
        metadata.trustAnchorSHA256 = anchors.anchors.map(\.sha256)
        sink = try makeSink(format: format, directory: scratch, metadata: metadata)
    } catch {
        printError("receiptflow bench: \(error.message)")
        return 1
    }
    let result: RunResult
    switch ExportPipeline(config: config, sink: sink, cache: ChainCache(anchors: anchors)).run() {
    case .completed(let r): result = r
    case .failed(let failure, _):
        printError("receiptflow bench: the export failed: \(failure.message)")
        return 1
    case .cancelled:
        return 130
    }
    let after = ceiling.sample(threads: config.threads, seconds: ceilingSeconds)

    let c = result.counts
    let rate = Double(c.records) / max(result.elapsedSeconds, 1e-9)
    let best = max(before, after)
    let ratio = best > 0 ? rate / best : 0
    let valid = c.count(of: .valid)
    print(
        "export:  \(c.records) receipts (\(valid) valid, \(c.records - valid) rejected) in "
            + String(format: "%.2f s: %.0f receipts/s", result.elapsedSeconds, rate)
            + " (\(config.threads) threads, \(format.rawValue))")
    print(
        "ceiling: " + String(format: "%.0f", best) + " RSA-2048 EVP_PKEY_verify/s on \(config.threads) threads "
            + String(format: "(before %.0f, after %.0f)", before, after))
    print("ratio:   " + String(format: "%.3f", ratio))
    print("note:    the ratio moves with this CPU's RSA speed; compare it only with runs on the same kind of CPU")

    if let path = args.value("--json") {
        let entries: JSONDocument = [
            ["name": "export throughput", "unit": "receipts/s", "value": .double(rate.rounded())],
            ["name": "RSA-2048 verify ceiling", "unit": "verifications/s", "value": .double(best.rounded())],
            ["name": "throughput / ceiling", "unit": "ratio", "value": .double((ratio * 1000).rounded() / 1000)],
        ]
        let bytes = entries.rendered(layout: .indentedSpacedColon, sortingKeys: true, trailingNewline: true)
        let file = URL(fileURLWithPath: path)
        do throws(SinkError) {
            try replaceFileDurably(
                directory: file.deletingLastPathComponent().path, name: file.lastPathComponent, bytes: bytes)
        } catch {
            printError("receiptflow bench: the --json file \(path) was not written: \(error.message)")
            return 1
        }
    }
    if let minRatio, ratio < minRatio {
        printError(
            "receiptflow bench: the ratio " + String(format: "%.3f", ratio) + " is below --min-ratio \(minRatio)")
        return 1
    }
    return 0
}

/// RSA-2048 verifications through OpenSSL: a fresh key, one signed SHA-256 digest, one `EVP_PKEY_CTX` per thread.
final class RSACeiling: @unchecked Sendable {
    private let key: OpaquePointer
    private let signature: [UInt8]
    private let digest: [UInt8]

    init?() {
        guard let gen = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(gen) }
        var made: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(gen) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(gen, 2048) == 1,
            EVP_PKEY_generate(gen, &made) == 1, let key = made
        else { return nil }
        let digest = [UInt8](repeating: 0x5A, count: 32)
        var sig = [UInt8](repeating: 0, count: 512)
        var length = sig.count
        let signed: Bool = {
            guard let sign = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return false }
            defer { EVP_PKEY_CTX_free(sign) }
            return EVP_PKEY_sign_init(sign) == 1 && EVP_PKEY_CTX_set_signature_md(sign, EVP_sha256()) == 1
                && EVP_PKEY_sign(sign, &sig, &length, digest, digest.count) == 1
        }()
        guard signed else {
            EVP_PKEY_free(key)
            return nil
        }
        self.key = key
        self.digest = digest
        signature = Array(sig[0..<length])
    }

    deinit { EVP_PKEY_free(key) }

    /// Verifications per second on `threads` threads over `seconds` of wall time.
    func sample(threads: Int, seconds: Double) -> Double {
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
        counts.initialize(repeating: 0)
        defer { counts.deallocate() }
        let shared = UncheckedBox(counts)
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = start + UInt64(seconds * 1e9)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return }
            defer { EVP_PKEY_CTX_free(ctx) }
            guard EVP_PKEY_verify_init(ctx) == 1, EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) == 1 else { return }
            var n = 0
            while DispatchTime.now().uptimeNanoseconds < deadline {
                for _ in 0..<50 where EVP_PKEY_verify(ctx, signature, signature.count, digest, digest.count) == 1 {
                    n += 1
                }
            }
            shared.value[t] = n
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(counts.reduce(0, +)) / elapsed
    }
}

/// Per-thread result slots written at disjoint indices.
private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
