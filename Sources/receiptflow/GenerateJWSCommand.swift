import CommandArguments
import Foundation
import ReceiptSynth

/// `receiptflow generate --jws --count N`: JWS data of every input shape and bad kind, with its truth.
func runGenerateJWS(_ a: Arguments) throws -> Int32 {
    for flag in [
        "--digest", "--device-ids", "--device-mismatch-fraction", "--years", "--as-of", "--expected-source",
        "--jws-fraction",
    ]
    where a.has(flag) {
        throw UsageError(message: "\(flag) does not apply to --jws")
    }
    guard let count = try a.int("--count"), count >= 0 else {
        throw UsageError(message: "--count N is required (a whole number of lines, 0 or more)")
    }
    guard let out = try a.generatorFile("--out") else { throw UsageError(message: "--out FILE is required") }
    let seed = try a.generatorSeed()
    let badFraction = try a.fraction("--bad-fraction") ?? 0.05
    let caDir = a.testCADirectory
    let pki: JWSTestPKI
    do { pki = try JWSTestPKI.load(directory: caDir, seed: JWSTestPKI.defaultSeed) } catch {
        printError("receiptflow generate: cannot prepare the JWS test PKI in \(caDir.path): \(error)")
        return 1
    }
    let outURL = URL(fileURLWithPath: out)
    let truthURL = try a.generatorFile("--truth").map { URL(fileURLWithPath: $0) } ?? Generator.truthURL(for: outURL)
    let factory = JWSRecordFactory(pki: pki, seed: seed, badFraction: badFraction)
    let stats = try JWSGenerator.run(factory: factory, count: count, out: outURL, truth: truthURL)
    if !a.has("--quiet") {
        let bad = stats.rows - stats.kinds["good", default: 0]
        printError(
            "wrote \(stats.rows) JWS rows (\(bad) bad) in \(stats.lines) lines to \(outURL.path) "
                + "and the truth to \(truthURL.path)")
        printError("trust anchor: \(caDir.appendingPathComponent("jws-root.pem").path)")
        printError(String(format: "%.2f s", stats.seconds))
    }
    return 0
}
