import Foundation

/// The company's own user ids of the simulated customers (`generate --customers`), written as each record's
/// `user_id` field (read by `export --user-field user_id`), and the `appAccountToken` a StoreKit 2 app sets.
///
/// Each account belongs to one user, whose id is a string, or for a tenth of the accounts a JSON number (a
/// database's integer key). About one account in twenty is shared: from some date on, every other record it sends
/// carries a second user's id (a family device, a shared login). About one record in fifty has no user id (the
/// field left out, or null). About two thirds of the accounts moved to StoreKit 2 set an app account token, a
/// UUID of the buying user, on their JWS transactions. Everything is a pure function of (seed, account, record).
struct CustomerUsers: Sendable {
    let seed: UInt64

    /// The `user_id` field of one record.
    enum Field: Sendable, Equatable {
        case absent
        case null
        case string(String)
        case number(Int64)

        /// The text `receipts.user_id` holds for it (a number's JSON text); nil when absent or null.
        var text: String? {
            switch self {
            case .absent, .null: return nil
            case .string(let s): return s
            case .number(let n): return String(n)
            }
        }

        /// The `,"user_id":...` member to append to the record's JSON object (empty when absent).
        var member: String {
            switch self {
            case .absent: return ""
            case .null: return ",\"user_id\":null"
            case .string(let s): return ",\"user_id\":" + JSONText.quoted(s)
            case .number(let n): return ",\"user_id\":" + String(n)
            }
        }
    }

    /// What an account's users are.
    struct Account: Sendable {
        var numeric: Bool
        /// When the second user starts sending records; nil for an account of one user.
        var sharedFrom: Int64?
        var setsToken: Bool
    }

    func account(_ a: CustomerAccount) -> Account {
        var rng = SplitMix(seed: seed ^ 0x5553_4552_5F49_4430, index: a.index)
        let numeric = rng.chance(0.1)
        let shared = rng.chance(0.05)
        let from = a.firstSeen + rng.int(in: 0...(400 * CustomerSimulation.day))
        return Account(numeric: numeric, sharedFrom: shared ? from : nil, setsToken: rng.chance(0.67))
    }

    /// The user (0 the account's own, 1 the second one) behind a record created at `at`, the `ordinal`-th of its
    /// kind (`jws`: a JWS line) the account sent.
    func user(_ a: CustomerAccount, at: Int64, ordinal: Int, jws: Bool) -> Int {
        guard let from = account(a).sharedFrom, at >= from else { return 0 }
        return (ordinal + (jws ? 1 : 0)) % 2
    }

    /// The `user_id` field of such a record.
    func field(_ a: CustomerAccount, at: Int64, ordinal: Int, jws: Bool) -> Field {
        var rng = SplitMix(seed: seed ^ 0x5553_4552_5F49_4431 ^ UInt64(ordinal) ^ (jws ? 1 << 40 : 0), index: a.index)
        if rng.chance(0.02) { return rng.chance(0.5) ? .absent : .null }
        let user = self.user(a, at: at, ordinal: ordinal, jws: jws)
        if account(a).numeric { return .number(100_000 + Int64(a.index) * 10 + Int64(user)) }
        return .string("u-\(String(seed, radix: 16))-\(a.index)" + (user == 0 ? "" : "-b"))
    }

    /// The app account token of a JWS transaction bought by `user` of the account; nil when its app sets none.
    func token(_ a: CustomerAccount, user: Int) -> String? {
        guard account(a).setsToken else { return nil }
        var rng = SplitMix(seed: seed ^ 0x544F_4B45_4E00_0000 ^ UInt64(user), index: a.index)
        let hex = Array(rng.bytes(16).map { String(format: "%02x", $0) }.joined())
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }
}
