import Foundation
import ReceiptModel

/// The aggregates of one run that its report shows, written beside the tables as `report-data.json`: counts by
/// app, environment and creation month, and the subscriptions by state and product. Its size depends on how many
/// distinct apps, months and products the run has (each capped at `maxKeys`), never on how many records it read.
public struct ReportData: Sendable, Equatable {
    /// The file's name in the output folder.
    public static let fileName = "report-data.json"
    /// Written as `format_version`; a reader refuses another.
    public static let formatVersion: Int64 = 1
    /// Most distinct apps, months or products kept; the rest are counted together in an "other" row.
    public static let maxKeys = 500
    /// Longest name kept (bytes of a bundle id, environment or product id); longer ones are cut.
    public static let maxValueBytes = 200

    /// Valid and rejected records of one group.
    public struct Count: Sendable, Equatable {
        public var valid = 0
        public var rejected = 0
        public var total: Int { valid + rejected }
        public init(valid: Int = 0, rejected: Int = 0) {
            self.valid = valid
            self.rejected = rejected
        }
    }

    /// The records of one app (bundle id), environment (`receipt_type`) and generation (`receipt` or `jws`).
    public struct AppRow: Sendable, Equatable {
        public var bundleID: String?
        public var environment: String?
        public var kind: String
        public var count: Count
        public init(bundleID: String?, environment: String?, kind: String, count: Count) {
            self.bundleID = bundleID
            self.environment = environment
            self.kind = kind
            self.count = count
        }
    }

    /// The records created in one month (`YYYY-MM`, UTC).
    public struct MonthRow: Sendable, Equatable {
        public var month: String
        public var count: Count
        public init(month: String, count: Count) {
            self.month = month
            self.count = count
        }
    }

    /// A number per month (`YYYY-MM`).
    public struct MonthValue: Sendable, Equatable {
        public var month: String
        public var value: Int
        public init(month: String, value: Int) {
            self.month = month
            self.value = value
        }
    }

    /// A subscriptions row count by environment and state.
    public struct StateRow: Sendable, Equatable {
        public var environment: String
        public var state: String
        public var count: Int
        public init(environment: String, state: String, count: Int) {
            self.environment = environment
            self.state = state
            self.count = count
        }
    }

    /// Subscriptions by their latest product: how many, and how many are `active` at the as-of time.
    public struct ProductRow: Sendable, Equatable {
        public var productID: String
        public var active: Int
        public var total: Int
        public init(productID: String, active: Int, total: Int) {
            self.productID = productID
            self.active = active
            self.total = total
        }
    }

    /// What the `subscriptions` table holds, in aggregate.
    public struct Subscriptions: Sendable, Equatable {
        public var rows = 0
        public var byState: [StateRow] = []
        public var byProduct: [ProductRow] = []
        /// Subscriptions by the month of their first purchase.
        public var startsByMonth: [MonthValue] = []
        public init() {}
    }

    /// The per-day activity of a `daily` table: active subscriptions per day and product, and the monthly
    /// event counts.
    public struct Activity: Sendable, Equatable {
        /// The products charted (the most active ones; the rest summed as "other products").
        public var products: [String] = []
        /// Days (`YYYY-MM-DD`) in order, each with the active count of every product, in `products` order.
        public var days: [(day: String, active: [Int])] = []
        public var months: [EventMonth] = []
        public init() {}

        public static func == (a: Activity, b: Activity) -> Bool {
            a.products == b.products && a.months == b.months && a.days.count == b.days.count
                && zip(a.days, b.days).allSatisfy { $0.day == $1.day && $0.active == $1.active }
        }
    }

    /// Subscription events of one month, from a `daily` table.
    public struct EventMonth: Sendable, Equatable {
        public var month: String
        public var starts = 0, conversions = 0, renewals = 0, refunds = 0, expirations = 0
        public init(month: String) { self.month = month }
    }

    /// SHA-256 fingerprints of the run's trust anchors (empty: Apple's built-in roots, or no verification).
    public var trustAnchorSHA256: [String] = []
    /// Whether `--as-of` was given (otherwise `as_of` is the data horizon).
    public var asOfGiven = false
    /// The newest creation date of a valid record, epoch milliseconds.
    public var newestValid: Int64? = nil
    public var records = 0
    public var valid = 0
    public var rejected: Int { records - valid }
    /// Sorted by records, most first; apps beyond `maxKeys` are in `otherApps`.
    public var apps: [AppRow] = []
    public var otherApps = Count()
    /// Months in order; months beyond `maxKeys` distinct ones are in `otherMonths`.
    public var months: [MonthRow] = []
    public var otherMonths = Count()
    /// Records without a creation date (unreadable, or a JWS without one).
    public var undated = Count()
    /// Nil when the run wrote no history tables (`--no-history`).
    public var subscriptions: Subscriptions? = nil
    /// Nil when the run has no `daily` table.
    public var activity: Activity? = nil

    public init() {}
}

// MARK: - report-data.json

extension ReportData {
    /// The JSON object of `report-data.json`.
    public func jsonValue() -> JSONDocument {
        func count(_ c: Count) -> JSONDocument { ["valid": .int(c.valid), "rejected": .int(c.rejected)] }
        var object = JSONObject([
            "format_version": .integer(Self.formatVersion),
            "trust_anchor_sha256": .strings(trustAnchorSHA256),
            "as_of_given": .bool(asOfGiven),
            "newest_valid_creation_ms": newestValid.map { .integer($0) } ?? .null,
            "records": .int(records),
            "valid": .int(valid),
            "rejected": .int(rejected),
            "by_app": .array(
                apps.map {
                    [
                        "bundle_id": .string($0.bundleID), "environment": .string($0.environment),
                        "kind": .string($0.kind), "valid": .int($0.count.valid), "rejected": .int($0.count.rejected),
                    ]
                }),
            "other_apps": count(otherApps),
            "by_month": .array(
                months.map {
                    ["month": .string($0.month), "valid": .int($0.count.valid), "rejected": .int($0.count.rejected)]
                }
            ),
            "other_months": count(otherMonths),
            "undated": count(undated),
        ])
        object["subscriptions"] =
            subscriptions.map { s in
                [
                    "rows": .int(s.rows),
                    "by_state": .array(
                        s.byState.map {
                            [
                                "environment": .string($0.environment), "state": .string($0.state),
                                "count": .int($0.count),
                            ]
                        }),
                    "by_product": .array(
                        s.byProduct.map {
                            ["product_id": .string($0.productID), "active": .int($0.active), "total": .int($0.total)]
                        }),
                    "starts_by_month": .array(
                        s.startsByMonth.map { ["month": .string($0.month), "count": .int($0.value)] }),
                ]
            } ?? .null
        object["activity"] =
            activity.map { a in
                [
                    "products": .strings(a.products),
                    "days": .array(
                        a.days.map { ["day": .string($0.day), "active": .array($0.active.map { .int($0) })] }),
                    "months": .array(
                        a.months.map {
                            [
                                "month": .string($0.month), "starts": .int($0.starts),
                                "conversions": .int($0.conversions),
                                "renewals": .int($0.renewals), "refunds": .int($0.refunds),
                                "expirations": .int($0.expirations),
                            ]
                        }),
                ]
            } ?? .null
        return .object(object)
    }

    /// The bytes of `report-data.json`: keys sorted, indented, a newline at the end.
    public func encoded() -> [UInt8] {
        jsonValue().rendered(layout: .indentedSpacedColon, sortingKeys: true, trailingNewline: true)
    }

    /// Reads the bytes of `report-data.json`; nil when they are not one (another format version included).
    public init?(json bytes: [UInt8]) {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
            (root["format_version"] as? NSNumber)?.int64Value == Self.formatVersion
        else { return nil }
        func int(_ o: [String: Any], _ k: String) -> Int { (o[k] as? NSNumber)?.intValue ?? 0 }
        func str(_ o: [String: Any], _ k: String) -> String? { o[k] as? String }
        func objects(_ o: [String: Any], _ k: String) -> [[String: Any]] { o[k] as? [[String: Any]] ?? [] }
        func count(_ o: Any?) -> Count {
            guard let o = o as? [String: Any] else { return Count() }
            return Count(valid: int(o, "valid"), rejected: int(o, "rejected"))
        }
        trustAnchorSHA256 = root["trust_anchor_sha256"] as? [String] ?? []
        asOfGiven = (root["as_of_given"] as? Bool) ?? false
        newestValid = (root["newest_valid_creation_ms"] as? NSNumber)?.int64Value
        records = int(root, "records")
        valid = int(root, "valid")
        apps = objects(root, "by_app").map {
            AppRow(
                bundleID: str($0, "bundle_id"), environment: str($0, "environment"), kind: str($0, "kind") ?? "",
                count: count($0))
        }
        otherApps = count(root["other_apps"])
        months = objects(root, "by_month").map { MonthRow(month: str($0, "month") ?? "", count: count($0)) }
        otherMonths = count(root["other_months"])
        undated = count(root["undated"])
        if let s = root["subscriptions"] as? [String: Any] {
            var subs = Subscriptions()
            subs.rows = int(s, "rows")
            subs.byState = objects(s, "by_state").map {
                StateRow(
                    environment: str($0, "environment") ?? "", state: str($0, "state") ?? "", count: int($0, "count"))
            }
            subs.byProduct = objects(s, "by_product").map {
                ProductRow(productID: str($0, "product_id") ?? "", active: int($0, "active"), total: int($0, "total"))
            }
            subs.startsByMonth = objects(s, "starts_by_month").map {
                MonthValue(month: str($0, "month") ?? "", value: int($0, "count"))
            }
            subscriptions = subs
        }
        if let a = root["activity"] as? [String: Any] {
            var activity = Activity()
            activity.products = a["products"] as? [String] ?? []
            activity.days = objects(a, "days").map {
                (str($0, "day") ?? "", ($0["active"] as? [NSNumber] ?? []).map(\.intValue))
            }
            activity.months = objects(a, "months").map {
                var m = EventMonth(month: str($0, "month") ?? "")
                m.starts = int($0, "starts")
                m.conversions = int($0, "conversions")
                m.renewals = int($0, "renewals")
                m.refunds = int($0, "refunds")
                m.expirations = int($0, "expirations")
                return m
            }
            self.activity = activity
        }
    }
}
