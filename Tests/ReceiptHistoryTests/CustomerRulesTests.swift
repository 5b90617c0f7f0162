import Foundation
import ReceiptModel
import Testing

/// The customer's columns of both tables (docs/history.md, "The customer"): the user id and app account token of
/// the newest occurrence (latest period) that has one, and whether several user ids were seen, merged in any
/// order, through spills, into the same rows.
@Suite struct CustomerRulesTests {
    static func receipt(
        _ line: Int64, created: Int64, user: String?, _ entries: [Entry], userField: Bool = true
    ) -> Receipt {
        Receipt(line: line, created: day(created), entries: entries, user: user, userField: userField)
    }

    @Test("a purchase takes the newest occurrence's user id that is not null; a newer record without one hides none")
    func newestUserID() throws {
        let e = Entry(transactionID: "1", purchase: day(0))
        let (t, _) = try runHistory([
            (
                batch([
                    Self.receipt(1, created: 1, user: "alice", [e]),
                    Self.receipt(2, created: 3, user: nil, [e]),
                    Self.receipt(3, created: 2, user: "alice", [e]),
                ]), 0
            )
        ])
        let p = try #require(t.purchases.first)
        #expect(p["user_id"] == "alice")
        #expect(p["multiple_user_ids"] == "false")
        #expect(p["line"] == "2")
        #expect(p["app_account_token"] == "")
    }

    @Test("two distinct user ids make multiple_user_ids true, and the newest one is the user id")
    func twoUsers() throws {
        let e = Entry(transactionID: "1", purchase: day(0))
        let (t, _) = try runHistory([
            (
                batch([
                    Self.receipt(1, created: 5, user: "bob", [e]),
                    Self.receipt(2, created: 1, user: "alice", [e]),
                    Self.receipt(3, created: 2, user: "alice", [e]),
                ]), 0
            )
        ])
        #expect(t.purchases.first?["user_id"] == "bob")
        #expect(t.purchases.first?["multiple_user_ids"] == "true")
    }

    @Test("user ids met oldest first after the newest occurrence, which has none: the newest of them, each kept once")
    func adverseOrder() throws {
        let e = Entry(transactionID: "1", originalTransactionID: "1", purchase: day(0), expires: day(30))
        var batches = [(batch([Self.receipt(1, created: 500, user: nil, [e])]), 0)]
        for i in 0..<300 {
            let user = "user-\(i)-" + String(repeating: "x", count: 40)
            var r = Self.receipt(Int64(i + 2), created: Int64(i), user: user, [e])
            r.entries[0].token = i % 3 == 0 ? "token-\(i)" : nil
            batches.append((batch([r]), 0))
        }
        let (t, _) = try runHistory(batches)
        let p = try #require(t.purchases.first)
        #expect(p["user_id"] == "user-299-" + String(repeating: "x", count: 40))
        #expect(p["multiple_user_ids"] == "true")
        #expect(p["app_account_token"] == "token-297")
        #expect(p["line"] == "1")
        #expect(p["occurrences"] == "301")
        #expect(t.subscriptions.first?["user_id"] == p["user_id"])
    }

    @Test("without --user-field the user columns are null")
    func nullWithoutTheOption() throws {
        let e = Entry(transactionID: "1", purchase: day(0), expires: day(30))
        let (t, _) = try runHistory([(batch([Self.receipt(1, created: 1, user: nil, [e], userField: false)]), 0)])
        #expect(t.purchases.first?["user_id"] == "")
        #expect(t.purchases.first?["multiple_user_ids"] == "")
        #expect(t.subscriptions.first?["user_id"] == "")
        #expect(t.subscriptions.first?["multiple_user_ids"] == "")
        #expect(t.subscriptions.first?["app_account_token"] == "")
    }

    @Test("the app account token of the newest occurrence that has one, whatever the newer occurrences lack")
    func tokenOfTheNewestThatHasOne() throws {
        let withToken = Entry(transactionID: "1", purchase: day(0), expires: day(30), token: "tok-a")
        let later = Entry(transactionID: "1", purchase: day(0), expires: day(30), token: "tok-b")
        let plain = Entry(transactionID: "1", purchase: day(0), expires: day(30))
        let receipts = [
            Self.receipt(1, created: 1, user: "u", [withToken]),
            Self.receipt(2, created: 2, user: "u", [later]),
            Self.receipt(3, created: 9, user: "u", [plain]),
            Self.receipt(4, created: 3, user: "u", [plain]),
        ]
        for order in [receipts, receipts.reversed()] {
            // One batch per receipt, in this order, through a spill after each.
            let (t, _) = try runHistory(order.map { (batch([$0]), 0) }, memoryBudget: 1)
            #expect(t.purchases.first?["app_account_token"] == "tok-b")
            #expect(t.purchases.first?["line"] == "3")
            #expect(t.subscriptions.first?["app_account_token"] == "tok-b")
        }
    }

    @Test("a subscription takes its latest period's user id that is not null; different periods' users mark it")
    func subscriptionUsers() throws {
        func period(_ id: String, _ start: Int64) -> Entry {
            Entry(transactionID: id, originalTransactionID: "100", purchase: day(start), expires: day(start + 30))
        }
        let (one, _) = try runHistory([
            (
                batch([
                    Self.receipt(1, created: 1, user: "alice", [period("100", 0)]),
                    Self.receipt(2, created: 31, user: nil, [period("101", 30)]),
                ]), 0
            )
        ])
        #expect(one.subscriptions.first?["user_id"] == "alice")
        #expect(one.subscriptions.first?["multiple_user_ids"] == "false")
        let (two, _) = try runHistory([
            (
                batch([
                    Self.receipt(1, created: 1, user: "alice", [period("100", 0)]),
                    Self.receipt(2, created: 31, user: "bob", [period("101", 30)]),
                ]), 0
            )
        ])
        #expect(two.subscriptions.first?["user_id"] == "bob")
        #expect(two.subscriptions.first?["multiple_user_ids"] == "true")
        #expect(two.purchases.map { $0["multiple_user_ids"] } == ["false", "false"])
    }

    /// Many accounts, each seen with a few users and tokens: the rows equal those computed here from the sets of
    /// occurrences, in one batch or shuffled into small batches with a spill after each.
    @Test("the user columns equal the rules over every occurrence, whatever the order, batches and spills")
    func orderIndependentAndExact() throws {
        var rng = SystemRandomNumberGenerator()
        var receipts: [Receipt] = []
        for i in 0..<300 {
            let account = i % 80
            let users = ["u\(account)", "v\(account)", nil]
            // Most accounts have one user; every seventh has two.
            let user =
                account % 7 == 0
                ? users[Int.random(in: 0...2, using: &rng)] : users[Int.random(in: 0...1, using: &rng) * 2]
            let entries = (0...(i % 4)).map { k in
                Entry(
                    transactionID: "\(account)-\(k)", originalTransactionID: "\(account)", purchase: day(Int64(k) * 30),
                    expires: day(Int64(k) * 30 + 30), token: Bool.random(using: &rng) ? "t\(i)" : nil)
            }
            receipts.append(Self.receipt(Int64(i + 1), created: Int64(i % 60), user: user, entries))
        }
        // The rules over the occurrences: recency is (created, line, entry).
        var newestUser: [String: (rank: [Int64], id: String)] = [:]
        var newestToken: [String: (rank: [Int64], id: String)] = [:]
        var users: [String: Set<String>] = [:]
        for r in receipts {
            for (k, e) in r.entries.enumerated() {
                let rank = [r.created!, r.line, Int64(k)]
                if let u = r.user {
                    users[e.transactionID, default: []].insert(u)
                    if newestUser[e.transactionID].map({ $0.rank.lexicographicallyPrecedes(rank) }) ?? true {
                        newestUser[e.transactionID] = (rank, u)
                    }
                }
                if let t = e.token,
                    newestToken[e.transactionID].map({ $0.rank.lexicographicallyPrecedes(rank) }) ?? true
                {
                    newestToken[e.transactionID] = (rank, t)
                }
            }
        }
        let (whole, _) = try runHistory([(batch(receipts), 0)])
        for p in whole.purchases {
            let id = p["transaction_id"]!
            #expect(p["user_id"] == (newestUser[id]?.id ?? ""), "\(id)")
            #expect(p["multiple_user_ids"] == ((users[id]?.count ?? 0) >= 2 ? "true" : "false"), "\(id)")
            #expect(p["app_account_token"] == (newestToken[id]?.id ?? ""), "\(id)")
        }
        #expect(whole.purchases.contains { $0["multiple_user_ids"] == "true" })
        #expect(whole.purchases.contains { $0["multiple_user_ids"] == "false" && $0["user_id"] != "" })
        for s in whole.subscriptions {
            let account = s["original_transaction_id"]!
            let periods = whole.purchases.filter { $0["original_transaction_id"] == account }
            let latestWithUser = periods.filter { $0["user_id"] != "" }.last
            #expect(s["user_id"] == (latestWithUser?["user_id"] ?? ""), "\(account)")
            let several =
                periods.contains { $0["multiple_user_ids"] == "true" }
                || Set(periods.compactMap { $0["user_id"] == "" ? nil : $0["user_id"] }).count >= 2
            #expect(s["multiple_user_ids"] == (several ? "true" : "false"), "\(account)")
        }
        for budget in [1, 4096] {
            var batches: [(ColumnBatch, Int)] = []
            let order = receipts.shuffled(using: &rng)
            var start = 0
            while start < order.count {
                let n = Int.random(in: 1...23, using: &rng)
                batches.append((batch(Array(order[start..<min(order.count, start + n)])), 0))
                start += n
            }
            let (split, _) = try runHistory(batches, memoryBudget: budget)
            #expect(split.result.spilledBytes > 0)
            #expect(split.purchasesCSV == whole.purchasesCSV)
            #expect(split.subscriptionsCSV == whole.subscriptionsCSV)
        }
    }
}
