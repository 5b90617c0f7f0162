import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptTestSupport
import Testing

@testable import ReceiptSink

@Suite struct VerifyReceiptJSONTests {
    /// The receipt of `whitepaek_consumable`, typed in from the fields of Apple's response (not parsed from it).
    static func whitepaek() -> Receipt {
        var r = Receipt()
        r.receiptType = "ProductionSandbox"
        r.appItemID = 0
        r.bundleID = "com.whitepaek.apps"
        r.applicationVersion = "1"
        r.downloadID = 0
        r.versionExternalIdentifier = 0
        r.receiptCreationDate = 1_606_708_938_000
        r.originalPurchaseDate = 1_375_340_400_000
        r.originalApplicationVersion = "1.0"
        var p = InAppPurchase()
        p.quantity = 1
        p.productID = "products.consumable"
        p.transactionID = "1000000747843075"
        p.originalTransactionID = "1000000747843075"
        p.purchaseDate = 1_606_708_938_000
        p.originalPurchaseDate = 1_606_708_938_000
        p.productType = 1  // never rendered
        p.isTrialPeriod = 0
        r.inApp = [p]
        return r
    }

    static func render(
        _ r: Receipt?, status: Int32 = 0, error: ReceiptError? = nil, record: VerifyReceiptJSON.Record?,
        pretty: Bool = false
    ) -> String {
        var out: [UInt8] = []
        VerifyReceiptJSON.render(receipt: r, status: status, error: error, record: record, pretty: pretty, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Every `"key":` in document order.
    static func keys(_ json: String) -> [String] {
        let re = try! NSRegularExpression(pattern: "\"([A-Za-z_]+)\"\\s*:")
        return re.matches(in: json, range: NSRange(json.startIndex..., in: json)).map {
            String(json[Range($0.range(at: 1), in: json)!])
        }
    }

    static let responseURL = Fixtures.verifyReceiptDir.appendingPathComponent("whitepaek_consumable.response.json")

    @Test
    func handBuiltReceiptMatchesApplesResponseKeyByKey() throws {
        try Self.expectMatchesResponse(Self.render(Self.whitepaek(), record: nil))
    }

    @Test
    func decodedReceiptMatchesApplesResponseKeyByKey() throws {
        let der = try Fixtures.bytes(Fixtures.verifyReceiptDir.appendingPathComponent("whitepaek_consumable.der"))
        let parser = ReceiptParser()
        let receipt = try der.withUnsafeBytes { p in
            try parser.parse(p)
            return parser.materialize(p)
        }
        try Self.expectMatchesResponse(Self.render(receipt, record: nil))
    }

    /// Compares a rendering with Apple's response: same status, environment, receipt values and key order
    /// (`request_date*` is server-only and left out).
    static func expectMatchesResponse(_ ours: String) throws {
        let apple = try String(contentsOf: Self.responseURL, encoding: .utf8)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(ours.utf8)) as? [String: Any])
        let a = try #require(try JSONSerialization.jsonObject(with: Data(apple.utf8)) as? [String: Any])
        #expect(o["status"] as? Int == a["status"] as? Int)
        #expect(o["environment"] as? String == a["environment"] as? String)
        var appleReceipt = try #require(a["receipt"] as? [String: Any])
        for k in appleReceipt.keys where k.hasPrefix("request_date") { appleReceipt[k] = nil }
        let ourReceipt = try #require(o["receipt"] as? [String: Any])
        #expect(Set(ourReceipt.keys) == Set(appleReceipt.keys))
        for (k, v) in appleReceipt where k != "in_app" {
            #expect((ourReceipt[k] as? NSObject) == (v as? NSObject), "receipt.\(k)")
        }
        let ourInApp = try #require(ourReceipt["in_app"] as? [[String: Any]])
        let appleInApp = try #require(appleReceipt["in_app"] as? [[String: Any]])
        #expect(ourInApp.count == appleInApp.count)
        for (x, y) in zip(ourInApp, appleInApp) {
            #expect(Set(x.keys) == Set(y.keys))
            for (k, v) in y { #expect((x[k] as? NSObject) == (v as? NSObject), "in_app.\(k)") }
        }
        // Key order inside `receipt`, as Apple wrote it (top-level keys and server-only keys aside).
        let topLevel: Set<String> = ["status", "environment", "receipt"]
        let ourOrder = Self.keys(ours).filter { !topLevel.contains($0) }
        let appleOrder = Self.keys(apple).filter { !topLevel.contains($0) && !$0.hasPrefix("request_date") }
        #expect(ourOrder == appleOrder)
    }

    @Test func theUserIDFollowsTheRecordOnlyWhenTheRunNamesAUserField() {
        var record = VerifyReceiptJSON.Record(source: "in.ndjson", line: 3, recordID: "r")
        #expect(!Self.render(nil, status: 21002, record: record).contains("user_id"))
        record.hasUserField = true
        #expect(Self.render(nil, status: 21002, record: record).contains(#""record_id":"r","user_id":null"#))
        record.userID = "u-\"1"
        #expect(Self.render(nil, status: 21002, record: record).contains(#""record_id":"r","user_id":"u-\"1""#))
    }

    @Test func prettyOutputHasTheSameKeysInTheSameOrder() throws {
        let compact = Self.render(Self.whitepaek(), record: .init(source: "a.ndjson", line: 7))
        let pretty = Self.render(Self.whitepaek(), record: .init(source: "a.ndjson", line: 7), pretty: true)
        #expect(Self.keys(compact) == Self.keys(pretty))
        #expect(pretty.contains("\n  \"receipt\": {\n    \"receipt_type\": \"ProductionSandbox\","))
        let a = try JSONSerialization.jsonObject(with: Data(compact.utf8)) as? NSDictionary
        let b = try JSONSerialization.jsonObject(with: Data(pretty.utf8)) as? NSDictionary
        #expect(a != nil && a == b)
    }

    @Test func failureWithoutAReceiptCarriesTheErrorFields() {
        let s = Self.render(
            nil, status: 21002, error: ReceiptError(.invalidBase64, "the receipt is not base64"),
            record: .init(source: "in,put.ndjson", line: 3))
        #expect(
            s == "{\"status\":21002,\"source\":\"in,put.ndjson\",\"line\":3,\"record_id\":null,"
                + "\"error_code\":\"invalid_base64\",\"error_detail\":\"the receipt is not base64\"}")
    }

    @Test func inAppOmissionRulesAndExactIntegers() throws {
        var r = Receipt()
        r.receiptType = "Production"
        r.appItemID = 1_234_567_890
        r.downloadID = 9_007_199_254_740_993  // 2^53 + 1: a Double would round it
        r.expirationDate = 64_092_211_200_000
        var a = InAppPurchase()
        a.quantity = 1
        a.webOrderLineItemID = 0  // omitted when 0
        a.isInIntroOfferPeriod = 1
        a.expiresDate = 1_606_708_938_000
        a.cancellationDate = 1_606_708_939_000
        a.promotionalOfferID = "promo"
        var b = InAppPurchase()
        b.webOrderLineItemID = 1_000_000_123_456_789
        r.inApp = [a, b]
        let s = Self.render(r, record: .init(source: "-", line: 1, recordID: "rec-1"))
        #expect(s.contains("\"download_id\":9007199254740993,"))
        #expect(s.contains("\"expiration_date\":\"4001-01-01 00:00:00 Etc/GMT\""))
        #expect(
            Self.keys(s) == [
                "status", "environment", "receipt", "receipt_type", "adam_id", "app_item_id", "download_id",
                "expiration_date", "expiration_date_ms", "expiration_date_pst", "in_app",
                "quantity", "expires_date", "expires_date_ms", "expires_date_pst", "cancellation_date",
                "cancellation_date_ms", "cancellation_date_pst", "is_trial_period", "is_in_intro_offer_period",
                "promotional_offer_id",
                "web_order_line_item_id", "is_trial_period",
                "source", "line", "record_id",
            ])
        #expect(s.contains("\"is_in_intro_offer_period\":\"true\",\"promotional_offer_id\":\"promo\"}"))
        #expect(s.contains("{\"web_order_line_item_id\":\"1000000123456789\",\"is_trial_period\":\"false\"}"))
        #expect(s.hasSuffix("\"source\":\"-\",\"line\":1,\"record_id\":\"rec-1\"}"))
        #expect(
            s.hasPrefix("{\"status\":0,\"environment\":\"Production\",\"receipt\":{\"receipt_type\":\"Production\","))
    }
}
