import CZstd
import Foundation
import ReceiptSynth

/// The end-to-end JWS corpus: zstd NDJSON lines of the JSON shapes `export` reads (docs/jws.md), signed by the
/// JWS test PKI kept in `<out>/test-ca`, made once per (count, seed) and reused:
/// - 6 in 10 lines: a signed transaction in the record field (`{"id": ..., "receipt-data": "eyJ..."}`);
/// - 2 in 10: a notification body (`{"signedPayload": ...}`) whose payload nests a signed transaction and a
///   signed renewal info (3 JWS);
/// - 2 in 10: a page of Get Transaction History (`{"signedTransactions": [...]}`, 2 to 6 transactions).
///
/// About 3% of the top-level JWS are bad, cycling through every bad kind of `JWSFactory`.
struct JWSCorpus {
    var path: String
    /// The genuine root, DER: the trust anchor of the run.
    var rootDER: [UInt8]
    var lines: Int
    var jws: Int
    var compressedBytes: Int
    /// The first `listed` JWS of the corpus, one per line, top-level and nested in input order (for the ceiling's
    /// inputs and the Python peer).
    var listPath: String

    static let bundleID = "com.example.bench"
    static let appAppleID: Int64 = 1_234_567_890

    /// Loads (or first generates) `<directory>/jws-corpus-<jws>-s<seed>.ndjson.zst`, its `.jws.txt` and its
    /// counts (`.json`).
    static func prepare(directory: String, jws target: Int, seed: UInt64) throws -> JWSCorpus {
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let caDir = URL(fileURLWithPath: directory).appendingPathComponent("test-ca")
        try fm.createDirectory(at: caDir, withIntermediateDirectories: true)
        let pki = try JWSTestPKI.load(directory: caDir)
        let base = directory + "/jws-corpus-\(target)-s\(seed)"
        let path = base + ".ndjson.zst"
        let listPath = base + ".jws.txt"
        let metaPath = base + ".json"
        if !fm.fileExists(atPath: path) || !fm.fileExists(atPath: listPath) || !fm.fileExists(atPath: metaPath) {
            FileHandle.standardError.write(Data("generating about \(target) JWS into \(path) ...\n".utf8))
            let (ndjson, all, lines) = generate(factory: JWSFactory(pki: pki), target: target, seed: seed)
            try write(zstd(ndjson), to: path)
            try write(Array((all.prefix(listed).joined(separator: "\n") + "\n").utf8), to: listPath)
            try write(Array(#"{"jws": \#(all.count), "lines": \#(lines)}"#.utf8), to: metaPath)
        }
        guard
            let meta = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: metaPath)))
                as? [String: Any], let jws = meta["jws"] as? Int, let lines = meta["lines"] as? Int
        else { throw BenchError("\(metaPath) does not describe the corpus; remove it to regenerate") }
        let size = (try fm.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        return JWSCorpus(
            path: path, rootDER: pki.root.der, lines: lines, jws: jws, compressedBytes: size, listPath: listPath)
    }

    /// How many JWS `jws.txt` holds: the first of the corpus, enough for the ceiling's inputs and the peer.
    static let listed = 5000

    /// The NDJSON text and every JWS in it (nested ones after their notification), in input order.
    static func generate(factory: JWSFactory, target: Int, seed: UInt64) -> ([UInt8], [String], Int) {
        var out: [UInt8] = []
        var all: [String] = []
        var rng = SplitMix(seed: seed)
        var line = 0
        var badCycle = 0
        let badKinds = JWSFactory.Kind.allCases.filter { $0 != .good }
        let start: Int64 = 1_700_000_000_000
        var serial = 0
        // A top-level JWS is bad with probability 3%, its kind the next in the cycle.
        func kind() -> JWSFactory.Kind {
            guard rng.int(100) < 3 else { return .good }
            badCycle += 1
            return badKinds[badCycle % badKinds.count]
        }
        func transaction(_ kind: JWSFactory.Kind = .good) -> String {
            serial += 1
            let t = start + Int64(serial) * 60_000
            let original = 2_000_000_000_000_000 + Int64(rng.int(5000))
            var p: [String: Any] = [
                "transactionId": String(2_000_000_000_100_000 + serial), "originalTransactionId": String(original),
                "webOrderLineItemId": String(2_000_000_100_000_000 + serial), "bundleId": bundleID,
                "productId": "com.example.bench.monthly", "subscriptionGroupIdentifier": "21000000",
                "purchaseDate": t, "originalPurchaseDate": start, "expiresDate": t + 2_592_000_000, "quantity": 1,
                "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "signedDate": t + 1000,
                "environment": "Production", "transactionReason": "RENEWAL", "storefront": "USA",
                "storefrontId": "143441", "price": 9990, "currency": "USD", "appTransactionId": "704897469903383919",
            ]
            if rng.int(20) == 0 {
                p["revocationDate"] = t + 86_400_000
                p["revocationReason"] = 0
            }
            if rng.int(10) == 0 {
                p["offerType"] = 1
                p["offerIdentifier"] = "intro"
            }
            return factory.sign(p, kind: kind)
        }
        func renewal() -> String {
            serial += 1
            let t = start + Int64(serial) * 60_000
            return factory.sign([
                "originalTransactionId": String(2_000_000_000_000_000 + Int64(rng.int(5000))),
                "autoRenewProductId": "com.example.bench.monthly", "productId": "com.example.bench.monthly",
                "autoRenewStatus": rng.int(4) == 0 ? 0 : 1, "signedDate": t, "environment": "Production",
                "recentSubscriptionStartDate": start, "renewalDate": t + 2_592_000_000, "currency": "USD",
                "renewalPrice": 9990, "isInBillingRetryPeriod": false,
            ])
        }
        func append(_ object: [String: Any]) {
            // Only the corpus's own dictionaries of strings, numbers and arrays reach here.
            out += try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            out.append(0x0A)
            line += 1
        }
        while all.count < target {
            switch rng.int(10) {
            case 0..<6:
                let jws = transaction(kind())
                all.append(jws)
                append(["id": "t\(line)", "receipt-data": jws])
            case 6, 7:
                let inner = transaction()
                let info = renewal()
                serial += 1
                let t = start + Int64(serial) * 60_000
                let bad = kind()
                let notification = factory.sign(
                    [
                        "notificationType": "DID_RENEW", "notificationUUID": "bench-\(serial)", "version": "2.0",
                        "signedDate": t,
                        "data": [
                            "bundleId": bundleID, "appAppleId": appAppleID, "environment": "Production",
                            "signedTransactionInfo": inner, "signedRenewalInfo": info, "status": 1,
                        ] as [String: Any],
                    ], kind: bad)
                // A payload that cannot be decoded hides its nested JWS from every reader.
                all += bad == .malformedBase64URL ? [notification] : [notification, inner, info]
                append(["signedPayload": notification])
            default:
                let page = (0..<(2 + rng.int(5))).map { _ in transaction(kind()) }
                all += page
                append(["signedTransactions": page, "bundleId": bundleID, "hasMore": true])
            }
        }
        return (out, all, line)
    }

    private static func zstd(_ bytes: [UInt8]) throws -> [UInt8] {
        var dst = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let n = dst.withUnsafeMutableBytes { d in
            bytes.withUnsafeBytes { s in ZSTD_compress(d.baseAddress, d.count, s.baseAddress, s.count, 3) }
        }
        guard ZSTD_isError(n) == 0 else { throw BenchError("zstd: \(String(cString: ZSTD_getErrorName(n)))") }
        return Array(dst.prefix(n))
    }

    /// Writes through a temporary name, so that an interrupted run leaves no partial corpus behind.
    private static func write(_ bytes: [UInt8], to path: String) throws {
        let tmp = path + ".\(getpid()).tmp"
        try Data(bytes).write(to: URL(fileURLWithPath: tmp))
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: tmp, toPath: path)
    }
}
