import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptTestSupport
import Testing

/// Every real receipt in Tests/Fixtures/real decodes to exactly what expected.json (OpenSSL plus an independent
/// ASN.1 decoder) read in it: app-level fields, every in-app entry, every raw attribute, the signer and certificates.
@Suite
struct RealFixtureTests {
    static let names = Fixtures.realReceiptNames()

    /// Epoch milliseconds of an expected date string, computed with Foundation (independent of DateParser).
    static func millis(_ s: Any?) -> Int64? {
        guard let s = s as? String, !s.isEmpty else { return nil }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        guard let d = f.date(from: s) else { return nil }
        return Int64((d.timeIntervalSince1970 * 1000).rounded())
    }

    static func int(_ v: Any?) -> Int64? { (v as? NSNumber)?.int64Value }
    static func hex(_ b: [UInt8]?) -> String? { b.map { $0.map { String(format: "%02x", $0) }.joined() } }

    @Test func allEighteenFixturesArePresent() {
        #expect(Self.names.count == 18)
    }

    @Test(arguments: names)
    func decodesEveryExpectedField(_ name: String) throws {
        let expected = try #require(try Fixtures.expected()[name] as? [String: Any])
        let bytes = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(name))
        let (container, receipt) = try decodeReceipt(bytes)

        // Container
        let encoding = expected["outer_length_encoding"] as? String
        #expect((container.encoding == .ber) == (encoding == "indefinite(BER)"))
        let certs = try #require(expected["certificates"] as? [[String: Any]])
        #expect(container.certificates.count == certs.count)
        let signer = try #require(expected["signer_info"] as? [String: Any])
        let digest = signer["digest_algorithm"] as? String
        #expect(container.digestAlgorithm == (digest == "sha1" ? .sha1 : .sha256))
        #expect(!container.digestAlgorithmMismatch)
        let sigAlg = signer["signature_algorithm"] as? String
        #expect(container.signatureAlgorithm == (sigAlg == "sha256_rsa" ? .sha256WithRSA : .rsaEncryption))
        #expect(container.signature.count == Self.int(signer["signature_len"]).map(Int.init))
        #expect(container.signedAttributes == nil)
        let serialHex = bytes[container.signerSerial].map { String(format: "%02x", $0) }.joined()
        let expectedSerial = signer["sid_serial"] as? String ?? ""
        #expect(serialHex.drop { $0 == "0" } == expectedSerial.drop { $0 == "0" })

        // Certificates: serials and validity windows match, and the signer is among them.
        for (i, c) in certs.enumerated() where i < container.certificates.count {
            let view = try bytes.withUnsafeBytes { (buf) throws(ReceiptError) in
                try CertificateView.parse(buf, container.certificates[i])
            }
            #expect(view.notBefore == Self.millis(c["not_before"]))
            #expect(view.notAfter == Self.millis(c["not_after"]))
            let s = bytes[view.serial].map { String(format: "%02x", $0) }.joined()
            #expect(s.drop { $0 == "0" } == (c["serial"] as? String ?? "").drop { $0 == "0" })
        }

        // App-level fields
        let r = try #require(expected["receipt"] as? [String: Any])
        #expect(receipt.receiptType == r["receipt_type"] as? String)
        #expect(receipt.appItemID == Self.int(r["app_item_id"]))
        #expect(receipt.bundleID == r["bundle_id"] as? String)
        #expect(receipt.applicationVersion == r["application_version"] as? String)
        #expect(receipt.originalApplicationVersion == r["original_application_version"] as? String)
        #expect(receipt.receiptCreationDate == Self.millis(r["receipt_creation_date"]))
        #expect(receipt.originalPurchaseDate == Self.millis(r["original_purchase_date"]))
        #expect(receipt.expirationDate == Self.millis(r["expiration_date"]))
        #expect(receipt.inApp.count == Self.int(r["in_app_count"]).map(Int.init))
        #expect(Self.hex(receipt.opaqueValue) == r["opaque_value_hex"] as? String)
        #expect(Self.hex(receipt.sha1Hash) == r["sha1_hash_hex"] as? String)

        // In-app entries, in receipt order
        let inApp = try #require(expected["in_app"] as? [[String: Any]])
        #expect(receipt.inApp.count == inApp.count)
        for (p, e) in zip(receipt.inApp, inApp) {
            #expect(p.quantity == Self.int(e["quantity"]))
            #expect(p.productID == e["product_id"] as? String)
            #expect(p.transactionID == e["transaction_id"] as? String)
            #expect(p.originalTransactionID == e["original_transaction_id"] as? String)
            #expect(p.purchaseDate == Self.millis(e["purchase_date"]))
            #expect(p.originalPurchaseDate == Self.millis(e["original_purchase_date"]))
            #expect(p.expiresDate == Self.millis(e["expires_date"]))
            #expect(p.cancellationDate == Self.millis(e["cancellation_date"]))
            #expect(p.webOrderLineItemID == Self.int(e["web_order_line_item_id"]))
            #expect(p.isTrialPeriod == Self.int(e["is_trial_period"]))
            #expect(p.isInIntroOfferPeriod == Self.int(e["is_in_intro_offer_period"]))
        }

        // Every raw attribute, top level and in-app, in order
        let top = try #require(expected["top_level_attributes_raw"] as? [[String: Any]])
        try Self.compareRaw(receipt.attributes, top)
        let inAppRaw = try #require(expected["in_app_attributes_raw"] as? [[[String: Any]]])
        #expect(inAppRaw.count == receipt.inApp.count)
        for (p, raw) in zip(receipt.inApp, inAppRaw) { try Self.compareRaw(p.attributes, raw) }
    }

    /// Compares raw attributes with expected.json's typed rendering of them, decoding each value independently.
    static func compareRaw(_ got: [RawAttribute], _ expected: [[String: Any]]) throws {
        #expect(got.count == expected.count)
        for (a, e) in zip(got, expected) {
            #expect(a.type == int(e["type"]).map(Int.init))
            #expect(a.version == int(e["version"]).map(Int.init))
            let v = a.value
            switch e["kind"] as? String {
            case "int":
                // INTEGER: 02 len value (two's complement)
                try #require(v.count >= 3 && v[0] == 0x02 && Int(v[1]) == v.count - 2)
                var n: Int64 = v[2] & 0x80 != 0 ? -1 : 0
                for b in v[2...] { n = (n << 8) | Int64(b) }
                #expect(n == int(e["value"]))
            case "utf8", "ia5":
                try #require(v.count >= 2 && (v[0] == 0x0C || v[0] == 0x16) && Int(v[1]) == v.count - 2)
                #expect(String(decoding: v[2...], as: UTF8.self) == e["value"] as? String)
            case "bytes":
                #expect(hex(v) == e["value"] as? String)
            case "set":
                #expect(v.first == 0x31)
                #expect(e["value"] as? String == "<in_app set, \(v.count) bytes>")
            default:
                Issue.record("unknown kind \(String(describing: e["kind"]))")
            }
        }
    }
}
