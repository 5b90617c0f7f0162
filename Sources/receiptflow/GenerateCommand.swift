import CommandArguments
import Foundation
import ReceiptSynth

let generateUsage = """
    usage: receiptflow generate --count N --out FILE [--seed S] [--digest sha1|sha256|mixed] [--bad-fraction F]
                                [--ca-dir DIR] [--truth FILE] [--device-ids [--device-mismatch-fraction F]]
                                [--quiet]
           receiptflow generate --customers N --out FILE [--years Y] [--seed S] [--as-of DATE]
                                [--expected-source PATH] [--jws-fraction F] [--unsigned] [--no-expected]
                                [--ca-dir DIR] [--quiet]
           receiptflow generate --jws --count N --out FILE [--seed S] [--bad-fraction F] [--ca-dir DIR]
                                [--truth FILE] [--quiet]

    Writes N synthetic receipts signed by a test CA as NDJSON (`{"id":...,"receipt-data":"<base64>"}` per line),
    zstd-compressed when FILE ends in .zst, plus a ground-truth file beside it (FILE.truth.ndjson, see
    data/README.md). The same seed gives byte-identical files, but for JWS (--jws, --jws-fraction): their
    ECDSA signatures are randomized, so only the truth, the expected tables and each JWS's header and payload
    repeat.

      --seed S            run seed, a whole number (default 1)
      --digest D          sha1, sha256, or mixed as Apple moved from one to the other (default mixed)
      --bad-fraction F    share of bad records of every kind, 0...1 (default 0.05)
      --ca-dir DIR        where the test CA's PEM files are kept; created if missing, reused if present
                          (default ~/.cache/receiptflow/test-ca). Pass DIR/root.pem to --trust-anchor.
      --truth FILE        where to write the ground truth (default: beside the output)
      --device-ids        each record carries its device identifier in "device_id" (a UUID, or a MAC
                          address for a quarter of them) and its receipt's hash (attribute 5) is made from
                          it, as Apple does; the truth gives device_hash_matches for
                          `export --device-id-field device_id`
      --device-mismatch-fraction F
                          share of those records carrying another device's identifier (default 0.1)
      --quiet             no progress or summary on standard error

    With --customers, simulates N customers of the test apps over Y years (default 3) and writes the receipts
    each one sent, roughly in date order, plus the tables an export of FILE must produce: FILE.purchases.csv,
    FILE.subscriptions.csv, FILE.events.csv, FILE.daily.csv and FILE.history.json (the as-of time and counts),
    FILE without .ndjson/.zst. Each record carries its customer's user id in "user_id" (a few accounts are
    shared by two users, a few records have none); the expected tables are those of
    `export --user-field user_id`.

      --as-of DATE        the time for the subscriptions' state and the daily table's last day, RFC 3339
                          (default: the data horizon)
      --expected-source P the `source` column of the expected purchases: FILE as the export will be given it
                          (default: FILE as given to --out)
      --jws-fraction F    share of the customers (0...1, default 0) that moved to StoreKit 2 at some date:
                          their later purchases, refunds and upgrades arrive as JWS transactions (in the
                          record field, notifications, transaction history pages), some also still in the
                          receipts they send after the move; the expected tables hold each purchase once.
                          Export with --trust-anchor DIR/root.pem --trust-anchor DIR/jws-root.pem
      --unsigned          the receipts' signatures are not made: each receipt is the signed one but for its
                          signature bytes (zeros), nearly four times as fast to make, for sizing and timing runs
                          of `export --no-verify` only (they decode to the same rows but receipt_sha256).
                          With verification on, every receipt is rejected: those a signed corpus would
                          accept fail with bad_signature. JWS lines are still signed.
      --no-expected       write FILE only, not the expected tables: building them holds every purchase
                          in memory (about 1 GB per million receipts) and takes minutes per million
                          receipts on one thread; for corpora made to time or size an export

    With --jws, writes N lines of StoreKit 2 / App Store Server data instead: JWS signed (ES256) by a test PKI
    shaped like Apple's (P-384 root, P-256 leaf, Apple's OIDs) in every shape export reads (a JWS in the
    record field or alone on a line, notification bodies with their nested transaction and renewal info,
    signedTransactions pages, Get All Subscription Statuses bodies), a share of them (--bad-fraction, default
    0.05 per JWS) of every bad kind: wrong alg, alg none, broken signature, another root, missing OIDs,
    expired at signedDate, malformed base64url, truncated x5c. The truth file has one line per JWS (its line,
    jws_index, expected status and error_code, see data/README.md). The PKI's keys (derived from a fixed
    seed) and certificates are kept in --ca-dir; pass DIR/jws-root.pem to --trust-anchor.
    """

/// `receiptflow generate`: synthetic receipts for tests, demos and benchmarks.
func runGenerate(_ args: [String]) -> Int32 {
    do {
        let a = try Arguments(
            args, flags: ["--quiet", "--help", "-h", "--device-ids", "--jws", "--unsigned", "--no-expected"],
            valued: [
                "--count", "--out", "--seed", "--digest", "--bad-fraction", "--ca-dir", "--truth", "--customers",
                "--years", "--as-of", "--expected-source", "--device-mismatch-fraction", "--jws-fraction",
            ])
        if a.has("--help") || a.has("-h") {
            print(generateUsage)
            return 0
        }
        guard a.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(a.positionals[0])'") }
        if a.value("--customers") != nil { return try runCustomers(a) }
        for flag in ["--unsigned", "--no-expected"] where a.has(flag) {
            throw UsageError(message: "\(flag) needs --customers")
        }
        if a.has("--jws") { return try runGenerateJWS(a) }
        if a.value("--jws-fraction") != nil { throw UsageError(message: "--jws-fraction needs --customers") }
        guard let count = try a.int("--count"), count >= 0 else {
            throw UsageError(message: "--count N is required (a whole number of receipts, 0 or more)")
        }
        guard let out = try a.generatorFile("--out") else { throw UsageError(message: "--out FILE is required") }
        let seed = try a.generatorSeed()
        var digest = DigestChoice.mixed
        if let d = a.value("--digest") {
            guard let v = DigestChoice(rawValue: d) else {
                throw UsageError(message: "--digest takes sha1, sha256 or mixed, got '\(d)'")
            }
            digest = v
        }
        let badFraction = try a.fraction("--bad-fraction") ?? 0.05
        var deviceIDs: DeviceIDPlan? = nil
        if a.has("--device-ids") {
            deviceIDs = DeviceIDPlan()
            if let v = try a.fraction("--device-mismatch-fraction") { deviceIDs?.mismatchFraction = v }
        } else if a.value("--device-mismatch-fraction") != nil {
            throw UsageError(message: "--device-mismatch-fraction needs --device-ids")
        }
        let caDir = a.testCADirectory
        let quiet = a.has("--quiet")

        let pki: TestPKI
        do { pki = try TestPKI.load(directory: caDir) } catch {
            printError("receiptflow generate: cannot prepare the test CA in \(caDir.path): \(error)")
            return 1
        }
        let outURL = URL(fileURLWithPath: out)
        let truthURL =
            try a.generatorFile("--truth").map { URL(fileURLWithPath: $0) } ?? Generator.truthURL(for: outURL)
        let factory = RecordFactory(
            pki: pki, seed: seed, digest: digest, badFraction: badFraction, deviceIDs: deviceIDs)
        let isTTY = isatty(2) == 1
        let stats = try Generator.run(factory: factory, count: count, out: outURL, truth: truthURL) { done in
            if !quiet && isTTY { FileHandle.standardError.write(Data("\r\(done)/\(count) receipts".utf8)) }
        }
        if !quiet {
            if isTTY { FileHandle.standardError.write(Data("\r".utf8)) }
            let bad = stats.records - stats.kinds[.valid, default: 0]
            printError(
                "wrote \(stats.records) receipts (\(bad) bad) in \(stats.lines) lines to \(outURL.path) "
                    + "and the truth to \(truthURL.path)")
            printError("trust anchor: \(caDir.appendingPathComponent("root.pem").path)")
            printError(String(format: "%.2f s, %.0f receipts/s", stats.seconds, stats.receiptsPerSecond))
        }
        return 0
    } catch let e as UsageError {
        return usageError("generate", e.message)
    } catch {
        printError("receiptflow generate: \(error)")
        return 1
    }
}
