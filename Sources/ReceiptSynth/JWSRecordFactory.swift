/// Makes the lines of `generate --jws`: JWS signed by the ``JWSTestPKI`` in every input shape `export` reads
/// (docs/jws.md), with a share of every bad kind of ``JWSFactory/Kind``, and the truth of each JWS. Record `i` is a
/// pure function of (seed, i) and the PKI's keys.
public struct JWSRecordFactory: Sendable {
    /// The input shapes, by the truth's `shape`.
    public enum Shape: String, CaseIterable, Sendable {
        /// `{"id":...,"receipt-data":"<JWS>"}`: a transaction (or a renewal info) in the record field.
        case recordField = "record-field"
        /// `{"id":...,"signedPayload":"<JWS>"}`: a notification V2 with its nested transaction and renewal info.
        case notification
        /// `{"id":...,"signedTransactions":[...]}`: a page of Get Transaction History (sometimes empty).
        case transactionPage = "transaction-page"
        /// `{"id":...,"data":[{"lastTransactions":[...]}]}`: Get All Subscription Statuses.
        case statuses
    }

    public let factory: JWSFactory
    public let seed: UInt64
    public let badFraction: Double

    public init(pki: JWSTestPKI, seed: UInt64, badFraction: Double) {
        factory = JWSFactory(pki: pki)
        self.seed = seed
        self.badFraction = badFraction
    }

    /// One generated line and the truth of each JWS it holds, in `jws_index` order.
    public struct Record: Sendable {
        public var line: [UInt8]
        /// Per JWS, the truth line after `{"line":N,` (see ``JWSTruth``).
        public var truthTails: [String]
        /// Per JWS, what it was made as (`good` or a bad kind); nil for the row of an empty page.
        public var kinds: [JWSFactory.Kind?]
    }

    static let apps = Catalog.apps.filter { !$0.products.isEmpty }
    static let start = TimeText.epochMillis(2020, 1, 1)
    static let span = TimeText.epochMillis(2025, 6, 1) - start
    static let day: Int64 = 86_400_000

    /// Record `index`.
    public func record(_ index: Int) -> Record {
        var rng = SplitMix(seed: seed ^ 0x4A57_5347_454E_0001, index: index)
        let shape = [Shape.recordField, .notification, .transactionPage, .statuses][rng.weighted([40, 30, 15, 15])]
        let id = "jws-\(String(seed, radix: 16))-\(index)"
        var items: [JWSTruth.Item] = []
        var line = ""
        switch shape {
        case .recordField:
            let t = transaction(&rng, index: index, n: 0)
            let kind = badKind(&rng)
            let item: JWSTruth.Item
            if t.productType == 3 && rng.chance(0.2) {
                let payload = JWSPayloads.renewal(of: t, signedDate: t.signedDate, autoRenew: rng.chance(0.8))
                item = .init(kind: kind, jws: factory.sign(payload, kind: kind), renewalOf: t)
            } else {
                item = .init(kind: kind, jws: factory.sign(t.payload, kind: kind), transaction: t)
            }
            items.append(item)
            line = "{\"id\":" + JSONText.quoted(id) + ",\"receipt-data\":" + JSONText.quoted(item.jws) + "}"
        case .notification:
            let t = transaction(&rng, index: index, n: 0)
            let txKind = badKind(&rng)
            let tx = JWSTruth.Item(kind: txKind, jws: factory.sign(t.payload, kind: txKind), transaction: t)
            var renewal: JWSTruth.Item? = nil
            if t.productType == 3 {
                let kind = badKind(&rng)
                let payload = JWSPayloads.renewal(of: t, signedDate: t.signedDate, autoRenew: rng.chance(0.8))
                renewal = .init(kind: kind, jws: factory.sign(payload, kind: kind), renewalOf: t)
            }
            let app = Self.apps.first { $0.bundleID == t.bundleID }
            let appID = t.environment == "Production" ? app?.appItemID : nil
            let notificationUUID = uuid(&rng)
            let signedDate = t.signedDate + rng.int(in: 0...60_000)
            let payload = JWSPayloads.notification(
                type: JWSPayloads.notificationType(of: t), uuid: notificationUUID, signedDate: signedDate,
                appAppleID: appID, t: t, transactionJWS: tx.jws, renewalJWS: renewal?.jws)
            // A notification that does not decode hides its nested JWS: it gets every bad kind but that one.
            var kind = badKind(&rng)
            if kind == .malformedBase64URL { kind = .brokenSignature }
            let notification = JWSTruth.Item(
                kind: kind, jws: factory.sign(payload, kind: kind),
                notification: .init(
                    environment: t.environment, bundleID: t.bundleID, appAppleID: appID,
                    signedDate: signedDate))
            items = [notification, tx.nested(in: notification)]
            if let renewal { items.append(renewal.nested(in: notification)) }
            line = "{\"id\":" + JSONText.quoted(id) + ",\"signedPayload\":" + JSONText.quoted(notification.jws) + "}"
        case .transactionPage:
            let count = rng.chance(0.04) ? 0 : 1 + rng.int(5)
            var page: [String] = []
            var first = transaction(&rng, index: index, n: 0)
            for n in 0..<count {
                var t = n == 0 ? first : transaction(&rng, index: index, n: n)
                t.bundleID = first.bundleID
                if n == 0 { first = t }
                let kind = badKind(&rng)
                let item = JWSTruth.Item(kind: kind, jws: factory.sign(t.payload, kind: kind), transaction: t)
                items.append(item)
                page.append(JSONText.quoted(item.jws))
            }
            line =
                "{\"id\":" + JSONText.quoted(id) + ",\"bundleId\":" + JSONText.quoted(first.bundleID)
                + ",\"environment\":" + JSONText.quoted(first.environment) + ",\"hasMore\":false,\"revision\":"
                + JSONText.quoted(String(index, radix: 16)) + ",\"signedTransactions\":[" + page.joined(separator: ",")
                + "]}"
            if count == 0 { items = [.emptyBody] }
        case .statuses:
            var groups: [String] = []
            var bundle = ""
            var environment = "Production"
            for g in 0..<(1 + rng.int(2)) {
                var last: [String] = []
                var group = ""
                for n in 0..<(1 + rng.int(2)) {
                    var t = subscription(&rng, index: index, n: g * 2 + n)
                    if g == 0 && n == 0 {
                        bundle = t.bundleID
                        environment = t.environment
                    }
                    t.bundleID = bundle
                    t.environment = environment
                    group = t.subscriptionGroup ?? ""
                    let txKind = badKind(&rng)
                    let tx = JWSTruth.Item(kind: txKind, jws: factory.sign(t.payload, kind: txKind), transaction: t)
                    let rnKind = badKind(&rng)
                    let renewal = JWSPayloads.renewal(of: t, signedDate: t.signedDate, autoRenew: rng.chance(0.8))
                    let rn = JWSTruth.Item(kind: rnKind, jws: factory.sign(renewal, kind: rnKind), renewalOf: t)
                    items += [tx, rn]
                    last.append(
                        "{\"originalTransactionId\":" + JSONText.quoted(t.originalTransactionID ?? t.transactionID)
                            + ",\"status\":1"
                            + ",\"signedTransactionInfo\":" + JSONText.quoted(tx.jws) + ",\"signedRenewalInfo\":"
                            + JSONText.quoted(rn.jws) + "}")
                }
                groups.append(
                    "{\"subscriptionGroupIdentifier\":" + JSONText.quoted(group) + ",\"lastTransactions\":["
                        + last.joined(separator: ",") + "]}")
            }
            line =
                "{\"id\":" + JSONText.quoted(id) + ",\"bundleId\":" + JSONText.quoted(bundle) + ",\"environment\":"
                + JSONText.quoted(environment) + ",\"data\":[" + groups.joined(separator: ",") + "]}"
        }
        return Record(
            line: Array(line.utf8),
            truthTails: items.enumerated().map { JWSTruth.tail(index: $0.offset, id: id, shape: shape, $0.element) },
            kinds: items.map(\.kind))
    }

    /// `good`, or with probability `badFraction` one of the bad kinds.
    func badKind(_ rng: inout SplitMix) -> JWSFactory.Kind {
        guard rng.chance(badFraction) else { return .good }
        return rng.pick(JWSFactory.Kind.allCases.filter { $0 != .good })
    }

    /// A transaction of any product of a random app.
    func transaction(_ rng: inout SplitMix, index: Int, n: Int) -> JWSPayloads.Transaction {
        let app = rng.pick(Self.apps)
        return make(&rng, app: app, product: rng.pick(app.products), index: index, n: n)
    }

    /// A transaction of an auto-renewable product.
    func subscription(_ rng: inout SplitMix, index: Int, n: Int) -> JWSPayloads.Transaction {
        let app = rng.pick(Self.apps.filter { !$0.subscriptions.isEmpty })
        return make(&rng, app: app, product: rng.pick(app.subscriptions), index: index, n: n)
    }

    private func make(
        _ rng: inout SplitMix, app: Catalog.App, product: Catalog.Product, index: Int, n: Int
    ) -> JWSPayloads.Transaction {
        let purchase = Self.start + rng.int(in: 0...Self.span)
        let base = 2_000_000_000_000_000 + Int64(index) * 16 + Int64(n)
        let renewed = product.type == 3 && rng.chance(0.6)
        let originalPurchase = renewed ? purchase - product.periodDays * Self.day * rng.int(in: 1...12) : purchase
        var t = JWSPayloads.Transaction(
            bundleID: app.bundleID, productID: product.id, productType: product.type,
            transactionID: String(base), originalTransactionID: String(renewed ? base - 1_000_000_000_000 : base),
            purchaseDate: purchase, originalPurchaseDate: originalPurchase,
            expiresDate: product.type == 3 ? purchase + product.periodDays * Self.day : nil,
            webOrderLineItemID: product.type == 3 ? 3_000_000_000 + Int64(index) * 16 + Int64(n) : nil,
            quantity: product.type == 1 ? rng.pick([1, 1, 2, 5]) : 1,
            environment: rng.chance(0.85) ? "Production" : "Sandbox",
            signedDate: purchase + rng.int(in: 1_000...(2 * Self.day)),
            price: rng.pick([990, 1990, 4990, 9990, 29990]),
            renewal: renewed)
        if product.type != 1 && rng.chance(0.05) {
            t.revocationDate = t.purchaseDate + rng.int(in: 3_600_000...(5 * Self.day))
            t.revocationReason = rng.int(in: 0...1)
            t.signedDate = t.revocationDate! + rng.int(in: 1_000...3_600_000)
        }
        if product.type == 3 && rng.chance(0.1) { t.offerType = rng.int(in: 1...3) }
        // Drawn apart from `rng`, so the rest of the corpus stays what it was: a third of the transactions carry
        // the app's account token, and half of the introductory offers name their discount.
        var extra = SplitMix(seed: seed ^ 0x544F_4B45_4E4A_5753, index: index * 16 + n)
        if extra.chance(1.0 / 3) { t.appAccountToken = uuid(&extra) }
        if t.offerType == 1 && extra.chance(0.5) {
            t.offerDiscountType = extra.pick(["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT"])
        }
        return t
    }

    private func uuid(_ rng: inout SplitMix) -> String {
        let hex = rng.bytes(16).map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        let c = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(c[$0]) }.joined(separator: "-")
    }
}
