import CReceiptLoop
import Foundation

/// One pass of the plain C loop (Benchmarks/CReceiptLoop) over the corpus on all threads: the work every record
/// needs whatever the exporter (zstd, the receipt field, base64, the SignedData walk, the receipt's SHA-256 and the
/// signed digest, the RSA check and the cached chain check through OpenSSL), written plainly and with no output.
/// The exporter's throughput is reported as a ratio to it: both move with the CPU alike.
struct CLoopResult {
    var lines: Int
    var decoded: Int
    var walked: Int
    var signatureOK: Int
    var valid: Int
    var chainChecks: Int
    var wallSeconds: Double
    var cpuSeconds: Double

    var linesPerSecond: Double { Double(lines) / wallSeconds }
    /// Process CPU µs per line with every thread busy (comparable with the export's CPU µs per receipt).
    var cpuMicrosPerLine: Double { cpuSeconds * 1e6 / Double(max(lines, 1)) }
}

func runCLoop(_ corpus: Corpus, threads: Int) throws -> CLoopResult {
    try measureCLoop(path: corpus.path, root: corpus.rootDER, threads: threads) { rf_cloop_run($0, $1, $2, $3, $4) }
}

/// The JWS counterpart (`rf_cloop_run_jws`): every JWS of every line hashed, its header's chain checked (cached),
/// its payload decoded and its ES256 signature checked through OpenSSL, the JWS a notification nests included.
func runCLoopJWS(_ corpus: JWSCorpus, threads: Int) throws -> CLoopResult {
    try measureCLoop(path: corpus.path, root: corpus.rootDER, threads: threads) {
        rf_cloop_run_jws($0, $1, $2, $3, $4)
    }
}

private func measureCLoop(
    path: String, root: [UInt8], threads: Int,
    _ run: (String, UnsafePointer<UInt8>?, Int, Int32, UnsafeMutablePointer<rf_cloop_result>) -> Int32
) throws -> CLoopResult {
    var r = rf_cloop_result()
    let c0 = Measure.processCPU()
    let t0 = Measure.wall()
    let status = root.withUnsafeBufferPointer { root in run(path, root.baseAddress, root.count, Int32(threads), &r) }
    let wall = Measure.wall() - t0
    let cpu = Measure.processCPU() - c0
    guard status == 0 else { throw BenchError("the C loop could not read \(path) or its trust anchor") }
    return CLoopResult(
        lines: Int(r.lines), decoded: Int(r.decoded), walked: Int(r.walked), signatureOK: Int(r.signature_ok),
        valid: Int(r.valid), chainChecks: Int(r.chain_checks), wallSeconds: wall, cpuSeconds: cpu)
}

/// Each export run against the faster (lower CPU µs per record) of the C loop passes just before and after it:
/// the C loop's CPU µs per line over the export's CPU µs per receipt, and the same by wall clock.
func pairedOverCLoop(_ runs: [(records: Int, wall: Double, cpu: Double)], _ loops: [CLoopResult]) -> (
    cpu: [Double], wall: [Double]
) {
    var cpu: [Double] = []
    var wall: [Double] = []
    for (i, run) in runs.enumerated() where i + 1 < loops.count {
        let a = loops[i]
        let b = loops[i + 1]
        let us = run.cpu * 1e6 / Double(max(run.records, 1))
        cpu.append(min(a.cpuMicrosPerLine, b.cpuMicrosPerLine) / us)
        wall.append(Double(run.records) / run.wall / max(a.linesPerSecond, b.linesPerSecond))
    }
    return (cpu, wall)
}

/// Refuses a C loop pass that did not do the export's work: it must read every record the export read, and check
/// at least as many signatures as the export accepted (a baseline that skipped work would flatter the ratios'
/// denominator, never the export).
func checkCLoopCoverage(_ loops: [CLoopResult], records: Int, valid: Int) throws {
    for l in loops where l.lines != records || l.signatureOK < valid {
        throw BenchError(
            "the C loop read \(l.lines) lines and verified \(l.signatureOK) signatures; the export read \(records) "
                + "receipts and accepted \(valid)")
    }
}
