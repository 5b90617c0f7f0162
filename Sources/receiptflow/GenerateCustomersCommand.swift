import CommandArguments
import Foundation
import ReceiptDER
import ReceiptSynth

/// `receiptflow generate --customers N`: simulated customers over years, with the expected history tables.
func runCustomers(_ a: Arguments) throws -> Int32 {
    for flag in ["--count", "--digest", "--bad-fraction", "--truth", "--jws"] where a.has(flag) {
        throw UsageError(.invalidCombination, option: flag, detail: "\(flag) does not apply to --customers")
    }
    guard let customers = try a.int("--customers"), customers >= 0 else {
        throw UsageError(
            .invalidValue, option: "--customers", value: a.value("--customers"),
            expected: "a whole number of customers, 0 or more")
    }
    let years = try a.int("--years") ?? 3
    guard (1...15).contains(years) else {
        throw UsageError(
            .invalidValue, option: "--years", value: String(years), expected: "a whole number from 1 to 15")
    }
    guard let out = try a.generatorFile("--out") else { throw UsageError(.missingOption, option: "--out FILE") }
    let seed = try a.generatorSeed()
    var asOf: Int64? = nil
    if let text = a.value("--as-of") {
        let parsed = Array(text.utf8).withUnsafeBytes { DateParser.parse($0) }
        guard case .millis(let ms) = parsed else {
            throw UsageError(
                .invalidValue, option: "--as-of", value: text, expected: "an RFC 3339 time such as 2024-01-31T00:00:00Z"
            )
        }
        asOf = ms
    }
    let caDir = a.testCADirectory
    let pki: TestPKI
    do { pki = try TestPKI.load(directory: caDir) } catch {
        printError("receiptflow generate: cannot prepare the test CA in \(caDir.path): \(error)")
        return 1
    }
    let jwsFraction = try a.fraction("--jws-fraction") ?? 0
    let outURL = URL(fileURLWithPath: out)
    let options = CustomerGenerator.Options(
        customers: customers, years: years, seed: seed, asOf: asOf, source: a.value("--expected-source") ?? out,
        unsigned: a.has("--unsigned"), expected: !a.has("--no-expected"))
    let stats: CustomerGenerator.Stats
    if a.value("--jws-fraction") != nil {
        let jwsPKI: JWSTestPKI
        do { jwsPKI = try JWSTestPKI.load(directory: caDir, seed: JWSTestPKI.defaultSeed) } catch {
            printError("receiptflow generate: cannot prepare the JWS test PKI in \(caDir.path): \(error)")
            return 1
        }
        stats = try CustomerGenerator.runMixed(
            pki: pki, jwsPKI: jwsPKI, jwsFraction: jwsFraction, options: options, out: outURL)
    } else {
        stats = try CustomerGenerator.run(pki: pki, options: options, out: outURL)
    }
    if !a.has("--quiet") && a.has("--no-expected") {
        printError("wrote \(stats.records) receipts of \(customers) customers to \(outURL.path) (no expected tables)")
        printError(String(format: "%.2f s", stats.seconds))
    } else if !a.has("--quiet") {
        let urls = CustomerGenerator.expectedURLs(for: outURL)
        let states = ["active", "revoked", "expired", "unknown", "not_started"]
            .map { "\($0) \(stats.states[$0, default: 0])" }.joined(separator: ", ")
        printError(
            "wrote \(stats.records) receipts of \(customers) customers to \(outURL.path) "
                + "(\(stats.contributing) contributing), \(stats.purchases) purchases to \(urls.purchases.path), "
                + "\(stats.subscriptions) subscriptions (\(states)) to \(urls.subscriptions.path)")
        printError("trust anchor: \(caDir.appendingPathComponent("root.pem").path)")
        if a.value("--jws-fraction") != nil {
            printError("JWS trust anchor: \(caDir.appendingPathComponent("jws-root.pem").path)")
        }
        printError(String(format: "%.2f s", stats.seconds))
    }
    return 0
}
