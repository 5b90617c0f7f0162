import Dispatch
import Foundation

/// `receiptflow generate --customers N`: the receipts of N simulated customers (`CustomerSimulation`), roughly in
/// date order across customers, plus the `purchases` and `subscriptions` tables an export of that one file must
/// write (`HistoryExpectation`) and a JSON file with the as-of time and counts.
///
/// Memory: every customer's account and every distinct purchase's expected row are held until the end, so memory
/// grows with the customers (data/README.md gives the figures): it suits test and demo corpora, not the
/// benchmark's millions of receipts.
public enum CustomerGenerator {
    /// What to generate.
    public struct Options: Sendable {
        public var customers: Int
        public var years: Int
        public var seed: UInt64
        /// The as-of time for `state` (epoch ms); nil for the data horizon.
        public var asOf: Int64?
        /// The `source` column of the expected purchases: the input path as the export is given it.
        public var source: String
        /// Receipts whose signature is not made (``ReceiptSigner/Options/unsigned``): the same lines but for the
        /// signature bytes, for exports without verification; every receipt fails verification.
        public var unsigned: Bool
        /// Whether to build and write the expected tables beside the output. Building them holds every distinct
        /// purchase until the end and judges each subscription on every day (the `daily` table) on one thread:
        /// about 1 GB and several minutes per million receipts, so corpora made only to time or size an export
        /// skip them.
        public var expected: Bool
        public init(
            customers: Int, years: Int = 3, seed: UInt64 = 1, asOf: Int64? = nil, source: String,
            unsigned: Bool = false,
            expected: Bool = true
        ) {
            self.customers = customers
            self.years = years
            self.seed = seed
            self.asOf = asOf
            self.source = source
            self.unsigned = unsigned
            self.expected = expected
        }
    }

    /// What a run produced.
    public struct Stats: Sendable {
        public var records = 0
        public var lines = 0
        public var contributing = 0
        public var purchases = 0
        public var subscriptions = 0
        public var states: [String: Int] = [:]
        public var asOf: Int64? = nil
        public var seconds = 0.0
    }

    /// The expected-table files of an output: `.zst` and `.ndjson`/`.jsonl` are stripped and `.purchases.csv`,
    /// `.subscriptions.csv`, `.events.csv`, `.daily.csv` and `.history.json` added (`c.ndjson.zst` ->
    /// `c.purchases.csv`, ...).
    public static func expectedURLs(
        for out: URL
    ) -> (purchases: URL, subscriptions: URL, events: URL, daily: URL, summary: URL) {
        var name = out.lastPathComponent
        if name.hasSuffix(".zst") { name = String(name.dropLast(4)) }
        for ext in [".ndjson", ".jsonl"] where name.hasSuffix(ext) { name = String(name.dropLast(ext.count)) }
        let dir = out.deletingLastPathComponent()
        return (
            dir.appendingPathComponent(name + ".purchases.csv"),
            dir.appendingPathComponent(name + ".subscriptions.csv"),
            dir.appendingPathComponent(name + ".events.csv"),
            dir.appendingPathComponent(name + ".daily.csv"),
            dir.appendingPathComponent(name + ".history.json")
        )
    }

    /// Generates the receipts into `out` and the expected tables beside it.
    public static func run(pki: TestPKI, options: Options, out: URL) throws(SynthError) -> Stats {
        let started = DispatchTime.now().uptimeNanoseconds
        let simulation = CustomerSimulation(seed: options.seed, years: options.years)
        let accounts = parallelMap(options.customers) { simulation.customer($0) }
        let items = accounts.flatMap(\.receipts).map(Item.receipt).sorted { $0.order < $1.order }
        return try write(
            items, accounts: accounts, pki: pki, factory: nil, options: options, out: out, started: started)
    }

    /// Writes the expected tables and the summary of `expectation` beside `out`.
    static func writeExpected(
        _ expectation: HistoryExpectation, stats: inout Stats, options: Options, out: URL
    ) throws(SynthError) {
        let asOf = options.asOf ?? expectation.horizon
        let purchases = expectation.purchaseRows()
        let subscriptions = expectation.subscriptionRows(asOf: asOf ?? 0)
        stats.contributing = expectation.contributing
        stats.purchases = purchases.count
        stats.subscriptions = subscriptions.count
        stats.asOf = asOf
        for s in subscriptions { stats.states[s.state, default: 0] += 1 }
        let urls = expectedURLs(for: out)
        try write(HistoryCSV.purchases(purchases, source: options.source), to: urls.purchases)
        try write(HistoryCSV.subscriptions(subscriptions), to: urls.subscriptions)
        try write(expectation.eventsCSV(), to: urls.events)
        try write(expectation.dailyCSV(asOf: asOf), to: urls.daily)
        try write(summary(stats, options: options), to: urls.summary)
    }

    /// The record's NDJSON line: the receipt signed as its kind says (or left unsigned), and its user id.
    static func line(
        _ r: CustomerReceipt, spec: ReceiptSpec, pki: TestPKI, seed: UInt64, user: CustomerUsers.Field,
        unsigned: Bool = false
    ) -> [UInt8] {
        var options = ReceiptSigner.Options()
        options.unsigned = unsigned
        options.digest = r.created >= Population.sha256Switch ? .sha256 : .sha1
        switch r.kind {
        case .flippedSignature: options.flipSignatureBit = true
        case .signerNotFound: options.signerSerialMismatch = true
        default: break
        }
        let der = ReceiptSigner.sign(payload: spec.payload(), identity: pki.identity(r.kind.variant), options: options)
        let id = "cust-\(String(seed, radix: 16))-\(r.customer)-\(r.ordinal)"
        // The plain line shape, `{"id":"…","receipt-data":"…"}`, with the user member before the closing brace.
        var bytes = Array("{\"id\":\"\(id)\",\"receipt-data\":\"".utf8)
        bytes += Data(der).base64EncodedData()
        bytes.append(UInt8(ascii: "\""))
        bytes += user.member.utf8
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    static func summary(_ s: Stats, options: Options) -> String {
        var j = JSONText()
        j.string("as_of", s.asOf.map(HistoryCSV.timestamp))
        j.string("source", options.source)
        j.int("customers", Int64(options.customers))
        j.int("years", Int64(options.years))
        j.int("seed", Int64(bitPattern: options.seed))
        j.int("records", Int64(s.records))
        j.int("contributing_receipts", Int64(s.contributing))
        j.int("purchases", Int64(s.purchases))
        j.int("subscriptions", Int64(s.subscriptions))
        var states = JSONText()
        for name in ["active", "revoked", "expired", "unknown", "not_started"] {
            states.int(name, Int64(s.states[name, default: 0]))
        }
        return "{" + j.text + ",\"states\":{" + states.text + "}}\n"
    }

    static func write(_ text: String, to url: URL) throws(SynthError) {
        let file = try OutputFile(url: url, compressed: false)
        do throws(SynthError) {
            try file.write(text)
            try file.finish()
        } catch {
            file.abort()
            throw error
        }
    }
}
