/// `generate --customers N --jws-fraction F`: a share F of the customers moved to StoreKit 2 at some date. From
/// then on their purchases, refunds and upgrades arrive as JWS transactions (a JWS in the record field, a
/// notification, or a Get Transaction History page that also re-sends older purchases), and only some of the
/// receipts they send after the move remain, so a purchase is often seen in both generations with the same
/// transaction id. No renewal infos are written. A customer's move is a pure function of (seed, index), drawn
/// apart from its account, so the accounts are those of the receipts-only corpus.
struct StoreKit2Move: Sendable {
    let seed: UInt64
    let fraction: Double
    /// The end of the simulated window: no JWS is signed at or after it.
    let end: Int64

    /// What a JWS line of a customer holds.
    enum Shape: Sendable {
        /// One transaction in the record field.
        case recordField
        /// A notification V2 whose `data` holds one signed transaction (and no renewal info).
        case notification
        /// A page of Get Transaction History: every purchase of the account up to then, newest first (up to 10).
        case page
    }

    /// One JWS line of a moved customer.
    struct Event: Sendable {
        var customer: Int
        /// The event's number among its customer's JWS lines (for its record id and the order of ties).
        var ordinal: Int
        /// When Apple signed the JWS of the line.
        var signedAt: Int64
        /// Where the line goes in the data file (as ``CustomerReceipt/sortKey``).
        var sortKey: Int64
        var shape: Shape
        /// Indexes into the account's entries, in the line's order.
        var entries: [Int]
        /// One per JWS of the line in `jws_index` order (the notification first): good, or a rejected kind.
        var kinds: [JWSFactory.Kind]
    }

    /// The customer's move date, or nil when it stayed with receipts (Xcode customers always do).
    func movedAt(_ account: CustomerAccount, start: Int64) -> Int64? {
        var rng = SplitMix(seed: seed ^ 0x5354_4B32_4D4F_5645, index: account.index)
        guard fraction > 0, account.receiptType != "Xcode", rng.chance(fraction) else { return nil }
        let from = max(account.firstSeen - 30 * CustomerSimulation.day, start)
        return from + rng.int(in: 0...max(end - 1 - from, 0))
    }

    /// The receipts the customer still sends (all before the move, about a third after it) and its JWS lines.
    func plan(_ account: CustomerAccount, start: Int64) -> (receipts: [CustomerReceipt], events: [Event]) {
        guard let moved = movedAt(account, start: start) else { return (account.receipts, []) }
        var rng = SplitMix(seed: seed ^ 0x4A57_534D_4958_0002, index: account.index)
        let receipts = account.receipts.filter { $0.created < moved || rng.chance(0.35) }
        var events: [Event] = []
        func add(_ at: Int64, _ shape: Shape, _ entries: [Int]) {
            guard at < end, !entries.isEmpty else { return }
            let count = entries.count + (shape == .notification ? 1 : 0)
            let kinds = (0..<count).map { _ in
                rng.chance(0.03)
                    ? rng.pick([JWSFactory.Kind.brokenSignature, .otherRoot, .expiredAtSignedDate]) : .good
            }
            events.append(
                Event(
                    customer: account.index, ordinal: events.count, signedAt: at,
                    sortKey: at + rng.int(in: -(6 * CustomerSimulation.hour)...(6 * CustomerSimulation.hour)),
                    shape: shape, entries: entries, kinds: kinds))
        }
        for (i, e) in account.entries.enumerated() {
            if e.purchased >= moved {
                add(
                    e.purchased + rng.int(in: 5_000...(10 * CustomerSimulation.minute)),
                    rng.chance(0.6) ? .recordField : .notification, [i])
            }
            if let c = e.cancelled, c >= moved {
                add(
                    c + rng.int(in: CustomerSimulation.minute...CustomerSimulation.hour),
                    rng.chance(0.7) ? .notification : .recordField, [i])
            }
        }
        // A history page or two: the purchases up to then, as the App Store Server API re-sends them.
        for _ in 0..<rng.int(3) {
            let at = moved + rng.int(in: 0...max(end - 1 - moved, 0))
            let shown = account.entries.indices.filter { account.entries[$0].visible(at: at) }
                .sorted { account.entries[$0].purchased > account.entries[$1].purchased }
            add(at, .page, Array(shown.prefix(10)))
        }
        return (receipts, events)
    }

    /// Entry `e` of `account` as a JWS signed at `at` shows it: its revocation once it happened.
    static func transaction(_ e: AccountEntry, of account: CustomerAccount, at: Int64) -> JWSPayloads.Transaction {
        let revoked = e.cancelled.flatMap { $0 <= at ? $0 : nil }
        var t = JWSPayloads.Transaction(
            bundleID: account.app.bundleID, productID: e.product.id, productType: e.product.type,
            transactionID: e.transactionID, originalTransactionID: e.originalTransactionID, purchaseDate: e.purchased,
            originalPurchaseDate: e.originalPurchased, expiresDate: e.expires,
            webOrderLineItemID: e.product.type == 3 ? e.webOrder : nil, quantity: e.quantity,
            environment: account.receiptType == "Production" ? "Production" : "Sandbox", signedDate: at,
            price: 990 + 1000 * Int64(e.product.id.utf8.count % 5), renewal: e.purchased != e.originalPurchased)
        t.revocationDate = revoked
        t.revocationReason = revoked == nil ? nil : e.cancellationReason
        // A cancellation without a reason is an upgrade (CustomerSimulation).
        t.isUpgraded = revoked != nil && e.cancellationReason == nil && e.product.type == 3
        // The offer as StoreKit 2 states it: a trial or an introductory price is an introductory offer, told
        // apart by its discount; a promotional offer carries its identifier.
        if e.trial {
            t.offerType = 1
            t.offerDiscountType = "FREE_TRIAL"
        } else if e.intro {
            t.offerType = 1
            t.offerDiscountType = "PAY_AS_YOU_GO"
        } else if let p = e.promotionalOfferID {
            t.offerType = 2
            t.offerIdentifier = p
        }
        return t
    }
}
