import Dispatch
import Foundation

/// `generate --customers N --jws-fraction F`: the receipts-only corpus of ``CustomerGenerator/run(pki:options:out:)``
/// with a share of the customers moved to StoreKit 2 (``StoreKit2Move``): their later purchases arrive as JWS
/// lines, and the expected tables count each purchase once over both generations (docs/jws.md, "Purchase
/// history").
extension CustomerGenerator {
    /// One line of the mixed corpus: a receipt, or a JWS line of a moved customer.
    enum Item: Sendable {
        case receipt(CustomerReceipt)
        case jws(StoreKit2Move.Event)

        var order: (Int64, Int, Int) {
            switch self {
            case .receipt(let r): return (r.sortKey, r.customer, r.ordinal)
            case .jws(let e): return (e.sortKey, e.customer, 1_000_000 + e.ordinal)
            }
        }
    }

    /// Generates the mixed corpus into `out` and the expected tables beside it; receipts are signed by `pki`, JWS
    /// by `jwsPKI`.
    public static func runMixed(
        pki: TestPKI, jwsPKI: JWSTestPKI, jwsFraction: Double, options: Options, out: URL
    ) throws(SynthError) -> Stats {
        let started = DispatchTime.now().uptimeNanoseconds
        let simulation = CustomerSimulation(seed: options.seed, years: options.years)
        let move = StoreKit2Move(seed: options.seed, fraction: jwsFraction, end: simulation.end)
        let accounts = parallelMap(options.customers) { simulation.customer($0) }
        let plans = parallelMap(accounts.count) { move.plan(accounts[$0], start: simulation.start) }
        let items = plans.flatMap { p in p.receipts.map(Item.receipt) + p.events.map(Item.jws) }
            .sorted { $0.order < $1.order }
        return try write(
            items, accounts: accounts, pki: pki, factory: JWSFactory(pki: jwsPKI), options: options, out: out,
            started: started)
    }

    /// Writes `items` (in order) into `out`, signed by `pki` (receipts) and `factory` (JWS lines; nil when there
    /// are none), and the expected tables beside it.
    static func write(
        _ items: [Item], accounts: [CustomerAccount], pki: TestPKI, factory: JWSFactory?, options: Options, out: URL,
        started: UInt64
    ) throws(SynthError) -> Stats {

        let data = try OutputFile(url: out, compressed: out.lastPathComponent.hasSuffix(".zst"))
        let users = CustomerUsers(seed: options.seed)
        var expectation = HistoryExpectation()
        var stats = Stats()
        do throws(SynthError) {
            let batch = 1024
            var first = 0
            while first < items.count {
                let slice = Array(items[first..<min(first + batch, items.count)])
                first += slice.count
                let made = parallelMap(slice.count) { i -> ([UInt8], Made, String?) in
                    switch slice[i] {
                    case .receipt(let r):
                        let account = accounts[r.customer]
                        let spec = account.spec(created: r.created)
                        let user = users.field(account, at: r.created, ordinal: r.ordinal, jws: false)
                        return (
                            line(
                                r, spec: spec, pki: pki, seed: options.seed, user: user, unsigned: options.unsigned),
                            .receipt(spec), user.text
                        )
                    case .jws(let e):
                        guard let factory else { preconditionFailure("a JWS line without a JWS factory") }
                        let account = accounts[e.customer]
                        let user = users.field(account, at: e.signedAt, ordinal: e.ordinal, jws: true)
                        let (bytes, what) = jwsLine(
                            e, account: account, factory: factory, seed: options.seed, users: users, user: user)
                        return (bytes, what, user.text)
                    }
                }
                var text: [UInt8] = []
                for (item, (bytes, what, user)) in zip(slice, made) {
                    let copies: Int
                    if case .receipt(let r) = item, r.twice { copies = 2 } else { copies = 1 }
                    for _ in 0..<copies {
                        stats.lines += 1
                        text += bytes
                        text.append(0x0A)
                        guard options.expected else { continue }
                        switch (item, what) {
                        case (.receipt(let r), .receipt(let spec)):
                            expectation.add(spec, kind: r.kind, input: 0, line: stats.lines, userID: user)
                        case (_, .jws(let rows)):
                            for (index, row) in rows.enumerated() where row.kind == .good {
                                if let t = row.transaction {
                                    expectation.addJWS(
                                        t, input: 0, line: stats.lines, jwsIndex: index, userID: user)
                                } else {
                                    expectation.addJWSRow(created: row.signedDate)
                                }
                            }
                        default: break
                        }
                    }
                    stats.records += copies
                }
                try data.write(text)
            }
            try data.finish()
        } catch {
            data.abort()
            throw error
        }
        if options.expected {
            try writeExpected(expectation, stats: &stats, options: options, out: out)
        } else {
            // Expected tables left by an earlier run would describe another corpus.
            let urls = expectedURLs(for: out)
            for url in [urls.purchases, urls.subscriptions, urls.events, urls.daily, urls.summary] {
                try? FileManager.default.removeItem(at: url)
            }
        }
        stats.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return stats
    }

    /// What a line is, for the expected tables: a receipt's payload, or the `receipts` rows of a JWS line.
    enum Made: Sendable {
        case receipt(ReceiptSpec)
        case jws([JWSRow])
    }

    /// One JWS of a line: its kind, when it was signed, and the transaction it holds (nil for a notification).
    struct JWSRow: Sendable {
        var kind: JWSFactory.Kind
        var signedDate: Int64
        var transaction: JWSPayloads.Transaction?
    }

    /// The NDJSON line of a moved customer's event, and its JWS rows in `jws_index` order. Each transaction
    /// carries the app account token of the user who bought it, when the app sets one.
    static func jwsLine(
        _ e: StoreKit2Move.Event, account: CustomerAccount, factory: JWSFactory, seed: UInt64, users: CustomerUsers,
        user: CustomerUsers.Field
    ) -> ([UInt8], Made) {
        let id = JSONText.quoted("cust-\(String(seed, radix: 16))-\(e.customer)-j\(e.ordinal)")
        let txs = e.entries.map { i in
            let entry = account.entries[i]
            var t = StoreKit2Move.transaction(entry, of: account, at: e.signedAt)
            t.appAccountToken = users.token(
                account, user: users.user(account, at: entry.purchased, ordinal: i, jws: true))
            return t
        }
        var rows: [JWSRow] = []
        let text: String
        switch e.shape {
        case .recordField:
            rows = [JWSRow(kind: e.kinds[0], signedDate: e.signedAt, transaction: txs[0])]
            text =
                "{\"id\":" + id + ",\"receipt-data\":" + JSONText.quoted(factory.sign(txs[0].payload, kind: e.kinds[0]))
                + user.member + "}"
        case .notification:
            let t = txs[0]
            let nested = factory.sign(t.payload, kind: e.kinds[1])
            let payload = JWSPayloads.notification(
                type: JWSPayloads.notificationType(of: t),
                uuid: "00000000-0000-4000-8000-\(String(format: "%06x%06x", e.customer, e.ordinal))",
                signedDate: e.signedAt, appAppleID: t.environment == "Production" ? account.app.appItemID : nil, t: t,
                transactionJWS: nested, renewalJWS: nil)
            rows = [
                JWSRow(kind: e.kinds[0], signedDate: e.signedAt, transaction: nil),
                JWSRow(kind: e.kinds[1], signedDate: e.signedAt, transaction: t),
            ]
            text =
                "{\"id\":" + id + ",\"signedPayload\":" + JSONText.quoted(factory.sign(payload, kind: e.kinds[0]))
                + user.member + "}"
        case .page:
            let signed = zip(txs, e.kinds).map { t, kind in JSONText.quoted(factory.sign(t.payload, kind: kind)) }
            rows = zip(txs, e.kinds).map { JWSRow(kind: $1, signedDate: e.signedAt, transaction: $0) }
            text =
                "{\"id\":" + id + ",\"bundleId\":" + JSONText.quoted(account.app.bundleID) + ",\"hasMore\":false"
                + ",\"signedTransactions\":[" + signed.joined(separator: ",") + "]" + user.member + "}"
        }
        return (Array(text.utf8), .jws(rows))
    }
}
