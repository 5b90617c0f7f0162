/// Simulates customers of the catalog's apps over years: subscriptions that renew, lapse and come back with a new
/// original transaction id, upgrades that cancel the old period, refunds, consumables the app finishes,
/// non-consumables restored on a new device, and the receipts each customer sent along the way. A customer is a
/// pure function of (seed, index).
///
/// Transaction ids: a Production customer numbers its purchases from a base of its own; a ProductionSandbox
/// customer uses the base of the customer before it (and that customer's app), so sandbox and production
/// purchases of one app share transaction ids, as they do in real migrations. Xcode customers' ids are `"0"`.
public struct CustomerSimulation: Sendable {
    public let seed: UInt64
    /// The first instant of the simulated window (2020-01-01).
    public let start: Int64
    /// The end of the window: no receipt is created at or after it.
    public let end: Int64

    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    static let minute: Int64 = 60_000
    /// Apps with something to buy.
    static let apps = Catalog.apps.filter { !$0.products.isEmpty }

    public init(seed: UInt64, years: Int) {
        self.seed = seed
        start = TimeText.epochMillis(2020, 1, 1)
        end = start + Int64(max(years, 1)) * 365 * Self.day
    }

    /// The app of customer `index` (drawn apart from the rest, so a sandbox customer can share its neighbour's).
    func appIndex(_ index: Int) -> Int {
        var rng = SplitMix(seed: seed ^ 0xA5A5_5A5A_0F0F_F0F0, index: index)
        return rng.int(Self.apps.count)
    }

    func receiptType(_ index: Int) -> String {
        var rng = SplitMix(seed: seed ^ 0x0123_4567_89AB_CDEF, index: index)
        return ["Production", "ProductionSandbox", "Xcode"][rng.weighted([84, 13, 3])]
    }

    /// Customer `index`, with its purchases and receipts (in creation order).
    func customer(_ index: Int) -> CustomerAccount {
        var rng = SplitMix(seed: seed, index: index)
        var type = receiptType(index)
        var slot = index
        if type == "ProductionSandbox" {
            if index > 0 { slot = index - 1 } else { type = "Production" }
        }
        let app = Self.apps[appIndex(slot)]
        let span = end - start
        let firstSeen = start + rng.int(in: 0...(span * 4 / 5))
        // The customer sends receipts until it stops using the app (often after the window ends).
        let lastActive = min(end - 1, firstSeen + rng.int(in: (20 * Self.day)...(span * 3 / 2)))
        var account = CustomerAccount(
            index: index, app: app, receiptType: type, firstSeen: firstSeen,
            downloadID: 10_000_000_000 + Int64(index) * 7919)
        var ids = IDSource(xcode: type == "Xcode", base: 100_000_000_000_000 + Int64(slot) * 100_000)
        var times: [Int64] = []  // receipt creation times

        // Subscriptions: streams of periods; a lapse ends a stream, a resubscription starts a new one.
        let subs = app.subscriptions
        if !subs.isEmpty && rng.chance(0.65) {
            var t = firstSeen + rng.int(in: 0...(10 * Self.day))
            var product = rng.pick(subs)
            // Auto-renew is turned off at some point, maybe after the window.
            let stops = firstSeen + rng.int(in: (30 * Self.day)...(span * 2))
            var streamStart = true
            var original = ""
            var originalPurchase: Int64 = 0
            var periodIndex = 0
            var webOrder = 1_000_000_000 + Int64(index) * 1000
            let dropOriginal = rng.chance(0.03)
            while t < end {
                if streamStart {
                    original = ids.next()
                    originalPurchase = t
                    periodIndex = 0
                    streamStart = false
                }
                let period = product.periodDays * Self.day
                let id = periodIndex == 0 ? original : ids.next()
                var e = AccountEntry(
                    product: product, transactionID: id,
                    originalTransactionID: ids.xcode || (dropOriginal && periodIndex == 1) ? nil : original,
                    purchased: t, originalPurchased: originalPurchase, expires: t + period, webOrder: webOrder,
                    quantity: 1)
                webOrder += 1
                e.trial = periodIndex == 0 && rng.chance(0.3)
                e.intro = !e.trial && periodIndex < 3 && rng.chance(0.1)
                if rng.chance(0.04) { e.promotionalOfferID = "promo.winback.\(rng.int(5))" }
                // The purchase or renewal is usually followed by a receipt.
                if periodIndex == 0 || rng.chance(0.55) { times.append(t + rng.int(in: 5_000...(2 * Self.day))) }
                periodIndex += 1
                let others = subs.filter { $0.id != product.id }
                if rng.chance(0.03) {
                    // Refund: the subscription ends; a receipt after it shows the cancellation.
                    let when = t + rng.int(in: Self.hour...(max(period / 2, 2 * Self.hour)))
                    e.cancelled = when
                    e.cancellationReason = rng.int(in: 0...1)
                    account.entries.append(e)
                    if rng.chance(0.7) { times.append(when + rng.int(in: Self.hour...(5 * Self.day))) }
                    break
                } else if !others.isEmpty && rng.chance(0.03) {
                    // Upgrade (or crossgrade): the current period is cancelled and a new one starts at once, in
                    // the same subscription (same original transaction id).
                    let when = t + rng.int(in: Self.hour...(max(period / 2, 2 * Self.hour)))
                    e.cancelled = when
                    account.entries.append(e)
                    product = rng.pick(others)
                    t = when
                    times.append(when + rng.int(in: 5_000...(10 * Self.minute)))
                    continue
                }
                account.entries.append(e)
                t += period
                if t >= stops { break }
                if rng.chance(0.05) {
                    // Lapse: nothing renews for a while, then perhaps a new subscription.
                    guard rng.chance(0.6) else { break }
                    t += rng.int(in: (3 * Self.day)...(200 * Self.day))
                    product = rng.pick(subs)
                    streamStart = true
                }
            }
        }

        // One-off purchases: consumables (finished by the app soon after, mostly), non-consumables, passes.
        let oneOffs = app.products.filter { $0.type != 3 }
        if !oneOffs.isEmpty {
            for _ in 0..<[0, 1, 2, 4, 8][rng.weighted([30, 30, 20, 12, 8])] {
                let p = rng.pick(oneOffs)
                let t = firstSeen + rng.int(in: 0...max(lastActive - firstSeen, 1))
                let id = ids.next()
                var e = AccountEntry(
                    product: p, transactionID: id, originalTransactionID: ids.xcode ? nil : id, purchased: t,
                    originalPurchased: t, expires: nil, webOrder: 0,
                    quantity: p.type == 1 ? rng.pick([1, 1, 2, 5]) : 1)
                if p.type == 1 && rng.chance(0.9) { e.finished = t + rng.int(in: 2 * Self.minute...(3 * Self.day)) }
                if p.type != 1 && rng.chance(0.02) {
                    e.cancelled = t + rng.int(in: Self.hour...(20 * Self.day))
                    e.cancellationReason = rng.int(in: 0...1)
                }
                account.entries.append(e)
                times.append(t + rng.int(in: 5_000...(10 * Self.minute)))
            }
        }

        // A restore on a new device: each non-consumable comes back as a new transaction of the same original.
        if rng.chance(0.15) {
            let t = firstSeen + rng.int(in: 0...max(lastActive - firstSeen, 1))
            let restored = account.entries.filter { $0.product.type == 0 && $0.purchased < t }
            for r in restored {
                var e = r
                e.transactionID = ids.next()
                e.purchased = t
                e.cancelled = nil
                e.cancellationReason = nil
                account.entries.append(e)
            }
            times.append(t + rng.int(in: 5_000...(5 * Self.minute)))
        }

        // App launches: a receipt every few weeks to months while the customer uses the app.
        var t = firstSeen + rng.int(in: 0...(30 * Self.day))
        while t < lastActive {
            times.append(t)
            t += rng.int(in: (10 * Self.day)...(120 * Self.day))
        }

        times = times.filter { $0 >= firstSeen && $0 < end && $0 <= max(lastActive, firstSeen) + 6 * Self.day }.sorted()
        account.receipts = times.enumerated().map { i, created in
            var kind = RecordKind.valid
            if rng.chance(0.03) { kind = rng.pick([.flippedSignature, .signerNotFound, .foreignCA]) }
            return CustomerReceipt(
                customer: index, ordinal: i, created: created,
                sortKey: created + rng.int(in: -(6 * Self.hour)...(6 * Self.hour)), kind: kind,
                twice: rng.chance(0.03))
        }
        return account
    }
}

/// Transaction ids of one customer: consecutive numbers from its base, or `"0"` for Xcode.
struct IDSource {
    var xcode: Bool
    var base: Int64
    var count: Int64 = 0

    mutating func next() -> String {
        if xcode { return "0" }
        count += 1
        return String(base + count)
    }
}
