/// The `purchases` and `subscriptions` tables that `receiptflow export` must write for generated receipts,
/// computed from the receipts' specs (what the generator wrote, never what a decoder read) by the rules of the
/// history contract: only valid, non-Xcode receipts contribute; the newest occurrence of a purchase gives its
/// facts; the newest occurrence with a cancellation date gives the cancellation; and so on. The customer's
/// columns are those of an export with `--user-field user_id`: each purchase's distinct user ids are kept as a set.
///
/// It holds one row per distinct purchase in memory, so it is meant for test-sized corpora.
public struct HistoryExpectation: Sendable {
    /// A purchase's key: (environment, bundle id, transaction id).
    struct Key: Hashable, Sendable {
        var environment: String
        var bundleID: String
        var transactionID: String
    }

    /// Where an occurrence stands in recency: greater is newer.
    struct Rank: Comparable, Sendable {
        var created: Int64
        var input: Int
        var line: Int
        var entry: Int
        static func < (a: Rank, b: Rank) -> Bool {
            (a.created, a.input, a.line, a.entry) < (b.created, b.input, b.line, b.entry)
        }
    }

    /// The fields of one in-app entry, as the `transactions` table holds them.
    struct Facts: Sendable {
        var originalTransactionID: String?
        var productID: String
        var quantity: Int64?
        var purchaseDate: Int64?
        var originalPurchaseDate: Int64?
        var expiresDate: Int64?
        var webOrderLineItemID: Int64?
        var isTrialPeriod: Bool?
        var isInIntroOfferPeriod: Bool?
        var promotionalOfferID: String?
        var productType: Int64?
        var cancellationDate: Int64?
        var cancellationReason: Int64?
        /// The record's `user_id` as `receipts.user_id` holds it; the JWS transaction's `appAccountToken`.
        var userID: String? = nil
        var appAccountToken: String? = nil
    }

    /// One `purchases` row under construction.
    struct Purchase: Sendable {
        var key: Key
        var facts: Facts
        var newest: Rank
        var cancellation: (date: Int64, reason: Int64?, rank: Rank)?
        var firstSeen: Int64
        var lastSeen: Int64
        var occurrences: Int64
        var line: Int
        /// The newest occurrence's user id and token among those that have one; every distinct user id seen.
        var user: (id: String, rank: Rank)? = nil
        var token: (id: String, rank: Rank)? = nil
        var users: Set<String> = []
    }

    private(set) var purchases: [Key: Purchase] = [:]
    /// The data horizon: the greatest creation date of a contributing receipt.
    public private(set) var horizon: Int64? = nil
    /// Receipts that contributed.
    public private(set) var contributing = 0

    public init() {}

    /// Whether a receipt of `kind` and `receiptType` contributes.
    static func contributes(kind: RecordKind, receiptType: String?) -> Bool {
        kind == .valid && !isStoreKitTesting(receiptType)
    }

    /// `Xcode` and `LocalTesting`: StoreKit testing, whose purchases never count (docs/history.md).
    static func isStoreKitTesting(_ environment: String?) -> Bool {
        environment == "Xcode" || environment == "LocalTesting"
    }

    /// Adds one record: the receipt at (`input`, `line`), written `spec`, generated as `kind`.
    public mutating func add(_ spec: ReceiptSpec, kind: RecordKind, input: Int, line: Int, userID: String? = nil) {
        let type = spec.string(0)
        guard Self.contributes(kind: kind, receiptType: type), let created = spec.date(12),
            let bundle = spec.string(2)
        else { return }
        contributing += 1
        horizon = max(horizon ?? created, created)
        let environment = type?.hasSuffix("Sandbox") == true ? "Sandbox" : "Production"
        for (i, e) in spec.inAppEntries.enumerated() {
            guard let txn = e.string(1703), let product = e.string(1702) else { continue }
            let key = Key(environment: environment, bundleID: bundle, transactionID: txn)
            let rank = Rank(created: created, input: input, line: line, entry: i)
            let facts = Facts(
                originalTransactionID: e.string(1705), productID: product, quantity: e.integer(1701),
                purchaseDate: e.date(1704), originalPurchaseDate: e.date(1706), expiresDate: e.date(1708),
                webOrderLineItemID: e.integer(1711), isTrialPeriod: e.integer(1713).map { $0 != 0 },
                isInIntroOfferPeriod: e.integer(1719).map { $0 != 0 }, promotionalOfferID: e.string(1721),
                productType: e.integer(1707), cancellationDate: e.date(1712), cancellationReason: e.integer(1720),
                userID: userID)
            occur(key, facts, rank: rank, line: line)
        }
    }

    /// A contributing `receipts` row of a JWS that is not a transaction (a notification): it moves the data
    /// horizon and nothing else (docs/jws.md, "Purchase history").
    mutating func addJWSRow(created: Int64) {
        contributing += 1
        horizon = max(horizon ?? created, created)
    }

    /// A valid JWS transaction at (`input`, `line`, `jwsIndex`): an occurrence created at its `signedDate`, whose
    /// `revocationDate` is a cancellation. `environment` is the JWS's (`Production`, `Sandbox`). Its offer reads as
    /// a receipt's flags: an introductory offer (`offerType` 1) is a trial when its discount is `FREE_TRIAL`, an
    /// introductory price when it is paid as you go or up front, and when the discount is not named, an
    /// introductory price whose trial flag is unknown; a promotional offer (2) gives its identifier.
    mutating func addJWS(_ t: JWSPayloads.Transaction, input: Int, line: Int, jwsIndex: Int, userID: String? = nil) {
        guard !Self.isStoreKitTesting(t.environment) else { return }
        addJWSRow(created: t.signedDate)
        let key = Key(
            environment: t.environment.hasSuffix("Sandbox") ? "Sandbox" : "Production", bundleID: t.bundleID,
            transactionID: t.transactionID)
        var facts = Facts(
            originalTransactionID: t.originalTransactionID, productID: t.productID, quantity: t.quantity,
            purchaseDate: t.purchaseDate, originalPurchaseDate: t.originalPurchaseDate, expiresDate: t.expiresDate,
            webOrderLineItemID: t.webOrderLineItemID, isTrialPeriod: nil, isInIntroOfferPeriod: nil,
            promotionalOfferID: nil, productType: nil, cancellationDate: t.revocationDate,
            cancellationReason: t.revocationReason, userID: userID, appAccountToken: t.appAccountToken)
        switch (t.offerType, t.offerDiscountType) {
        case (1, nil):
            facts.isInIntroOfferPeriod = true
        case (1, let discount?):
            facts.isTrialPeriod = discount == "FREE_TRIAL"
            facts.isInIntroOfferPeriod = ["PAY_AS_YOU_GO", "PAY_UP_FRONT"].contains(discount)
        default:
            facts.isTrialPeriod = false
            facts.isInIntroOfferPeriod = false
            if t.offerType == 2 { facts.promotionalOfferID = t.offerIdentifier }
        }
        occur(key, facts, rank: Rank(created: t.signedDate, input: input, line: line, entry: jwsIndex), line: line)
    }

    /// One occurrence of the purchase `key`: the newest gives the facts, the newest with a cancellation date the
    /// cancellation.
    private mutating func occur(_ key: Key, _ facts: Facts, rank: Rank, line: Int) {
        let created = rank.created
        var p =
            purchases[key]
            ?? Purchase(
                key: key, facts: facts, newest: rank, cancellation: nil, firstSeen: created, lastSeen: created,
                occurrences: 0, line: line)
        p.occurrences += 1
        p.firstSeen = min(p.firstSeen, created)
        p.lastSeen = max(p.lastSeen, created)
        if rank >= p.newest {
            p.newest = rank
            p.facts = facts
            p.line = line
        }
        if let c = facts.cancellationDate, p.cancellation.map({ rank > $0.rank }) ?? true {
            p.cancellation = (c, facts.cancellationReason, rank)
        }
        if let u = facts.userID {
            p.users.insert(u)
            if p.user.map({ rank > $0.rank }) ?? true { p.user = (u, rank) }
        }
        if let k = facts.appAccountToken, p.token.map({ rank > $0.rank }) ?? true { p.token = (k, rank) }
        purchases[key] = p
    }

    /// The `purchases` table as the export writes it in CSV; `source` fills the `source` column.
    public func purchasesCSV(source: String) -> String { HistoryCSV.purchases(purchaseRows(), source: source) }

    /// The `subscriptions` table at as-of time `asOf` (epoch ms) as the export writes it in CSV.
    public func subscriptionsCSV(asOf: Int64) -> String { HistoryCSV.subscriptions(subscriptionRows(asOf: asOf)) }

    /// The `purchases` rows in the contract's order: environment, bundle id, original transaction id (null
    /// first), purchase date, transaction id; strings bytewise.
    func purchaseRows() -> [Purchase] {
        purchases.values.sorted { a, b in
            if a.key.environment != b.key.environment { return bytes(a.key.environment, b.key.environment) }
            if a.key.bundleID != b.key.bundleID { return bytes(a.key.bundleID, b.key.bundleID) }
            let ao = a.facts.originalTransactionID
            let bo = b.facts.originalTransactionID
            if ao != bo {
                guard let ao else { return true }
                guard let bo else { return false }
                return bytes(ao, bo)
            }
            if a.facts.purchaseDate != b.facts.purchaseDate {
                guard let ap = a.facts.purchaseDate else { return true }
                guard let bp = b.facts.purchaseDate else { return false }
                return ap < bp
            }
            return bytes(a.key.transactionID, b.key.transactionID)
        }
    }

    /// One `subscriptions` row.
    struct Subscription: Sendable {
        var environment: String
        var bundleID: String
        var originalTransactionID: String
        var firstProductID: String
        var latestProductID: String
        var firstPurchaseDate: Int64?
        var latestPurchaseDate: Int64?
        var latestExpiresDate: Int64?
        var periods: Int64
        var trialPeriods: Int64
        var introPeriods: Int64
        var cancelledPeriods: Int64
        var observedThrough: Int64
        var state: String
        var userID: String?
        var multipleUserIDs: Bool
        var appAccountToken: String?
    }

    /// The `subscriptions` rows at as-of time `asOf`, in the contract's order.
    func subscriptionRows(asOf: Int64) -> [Subscription] {
        var groups: [Key: [Purchase]] = [:]
        for p in purchases.values where p.facts.expiresDate != nil {
            let id = p.facts.originalTransactionID ?? p.key.transactionID
            groups[Key(environment: p.key.environment, bundleID: p.key.bundleID, transactionID: id), default: []]
                .append(p)
        }
        let rows = groups.map { key, periods in Self.subscription(key, periods, asOf: asOf) }
        return rows.sorted { a, b in
            if a.environment != b.environment { return bytes(a.environment, b.environment) }
            if a.bundleID != b.bundleID { return bytes(a.bundleID, b.bundleID) }
            return bytes(a.originalTransactionID, b.originalTransactionID)
        }
    }

    /// (purchase date, transaction id) order of periods; a null purchase date first.
    private static func earlier(_ a: Purchase, _ b: Purchase) -> Bool {
        if a.facts.purchaseDate != b.facts.purchaseDate {
            guard let ap = a.facts.purchaseDate else { return true }
            guard let bp = b.facts.purchaseDate else { return false }
            return ap < bp
        }
        return bytes(a.key.transactionID, b.key.transactionID)
    }

    private static func subscription(_ key: Key, _ periods: [Purchase], asOf: Int64) -> Subscription {
        let ordered = periods.sorted(by: earlier)
        let cancelled = { (p: Purchase) in p.cancellation != nil }
        let uncancelledExpiry = periods.filter { !cancelled($0) }.compactMap(\.facts.expiresDate).max()
        // The customer: of the latest period that has one; several users when a period has several or two periods
        // name different ones.
        let periodUsers = Set(ordered.compactMap(\.user?.id))
        return Subscription(
            environment: key.environment, bundleID: key.bundleID, originalTransactionID: key.transactionID,
            firstProductID: ordered.first!.facts.productID, latestProductID: ordered.last!.facts.productID,
            firstPurchaseDate: periods.compactMap(\.facts.purchaseDate).min(),
            latestPurchaseDate: periods.compactMap(\.facts.purchaseDate).max(),
            latestExpiresDate: uncancelledExpiry, periods: Int64(periods.count),
            trialPeriods: Int64(periods.filter { $0.facts.isTrialPeriod == true }.count),
            introPeriods: Int64(periods.filter { $0.facts.isInIntroOfferPeriod == true }.count),
            cancelledPeriods: Int64(periods.filter(cancelled).count),
            observedThrough: periods.map(\.lastSeen).max()!,
            state: state(ordered, observedThrough: periods.map(\.lastSeen).max()!, asOf: asOf),
            userID: ordered.last(where: { $0.user != nil })?.user?.id,
            multipleUserIDs: periodUsers.count >= 2 || periods.contains { $0.users.count >= 2 },
            appAccountToken: ordered.last(where: { $0.token != nil })?.token?.id)
    }

    /// The state rules, first match wins: not_started, active, revoked, expired, unknown.
    static func state(_ ordered: [Purchase], observedThrough: Int64, asOf: Int64) -> String {
        let counted = ordered.filter { ($0.facts.purchaseDate ?? Int64.max) <= asOf }
        guard let latest = counted.last else { return "not_started" }
        let cancelledByThen = { (p: Purchase) in (p.cancellation?.date).map { $0 <= asOf } ?? false }
        let live = counted.filter { !cancelledByThen($0) }
        if live.contains(where: { p in p.facts.expiresDate.map { asOf < $0 } ?? false }) { return "active" }
        if cancelledByThen(latest) { return "revoked" }
        if let lastExpiry = live.compactMap(\.facts.expiresDate).max(), observedThrough >= lastExpiry {
            return "expired"
        }
        return "unknown"
    }
}

/// Bytewise (UTF-8) string order.
func bytes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
