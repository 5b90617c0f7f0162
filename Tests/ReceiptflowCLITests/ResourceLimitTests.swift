import Foundation
import ReceiptDER
import ReceiptIO
import ReceiptModel
import ReceiptSynth
import Testing

/// Each resource limit at the module level: exactly at the limit is accepted, one over is rejected with
/// `limit_exceeded` (or the scanner's `invalid_json`), with small limits so that the inputs stay small.
struct ResourceLimitTests {
    static func parse(_ der: [UInt8], _ limits: DERLimits = DERLimits()) -> ReceiptError? {
        let parser = ReceiptParser(limits: limits)
        return der.withUnsafeBytes { buf in
            do throws(ReceiptError) {
                try parser.parse(buf)
                return nil
            } catch {
                return error
            }
        }
    }

    static func limits(_ edit: (inout DERLimits) -> Void) -> DERLimits {
        var l = DERLimits()
        edit(&l)
        return l
    }

    @Test func nestingDeeperThanTheLimitIsLimitExceeded() {
        // Definite nesting stops at the first element the schema does not expect; indefinite nesting has to be
        // walked to find its end, which the depth limit bounds.
        #expect(Self.parse(Hostile.indefiniteNesting(200_000))?.code == .limitExceeded)
        #expect(Self.parse(Hostile.definiteNesting(200_000))?.code == .malformedDER)
        let shallow = Self.limits { $0.maxDepth = 8 }
        #expect(Self.parse(Hostile.signed(Hostile.indefiniteNesting(9, tag: 0x31)), shallow)?.code == .limitExceeded)
        // A BER receipt (indefinite lengths, chunked content) fits the default depth.
        let ber = ReceiptSigner.sign(
            payload: Hostile.basePayload().encode(), identity: Hostile.pki.identity(.valid), options: .init(form: .ber))
        #expect(Self.parse(ber) == nil)
    }

    @Test func moreAttributesThanTheLimitIsLimitExceeded() {
        let six = Hostile.basePayload().attributes.count
        let l = Self.limits { $0.maxAttributes = 50 }
        #expect(Self.parse(Hostile.signed(Hostile.manyTinyAttributes(50 - six)), l) == nil)
        let over = Self.parse(Hostile.signed(Hostile.manyTinyAttributes(51 - six)), l)
        #expect(over?.code == .limitExceeded)
        #expect(over.map { "\($0.reason)" } == "the receipt has more attributes than the limit")
    }

    @Test func attributesInsidePurchasesCountTowardsTheLimit() {
        var b = Hostile.basePayload()
        var p = PayloadBuilder()
        for _ in 0..<50 { p.integer(1701, 1) }
        b.inApp(p)
        #expect(Self.parse(Hostile.signed(b.encode()), Self.limits { $0.maxAttributes = 57 })?.code == nil)
        #expect(Self.parse(Hostile.signed(b.encode()), Self.limits { $0.maxAttributes = 56 })?.code == .limitExceeded)
    }

    @Test func morePurchasesThanTheLimitIsLimitExceeded() {
        let l = Self.limits { $0.maxInAppEntries = 10 }
        #expect(Self.parse(Hostile.signed(Hostile.manyEmptyPurchases(10)), l) == nil)
        #expect(Self.parse(Hostile.signed(Hostile.manyEmptyPurchases(11)), l)?.code == .limitExceeded)
    }

    @Test func moreCertificatesThanTheLimitIsLimitExceeded() {
        let der = Hostile.signed(Hostile.basePayload().encode())  // leaf, intermediate, root
        #expect(Self.parse(der, Self.limits { $0.maxCertificates = 3 }) == nil)
        #expect(Self.parse(der, Self.limits { $0.maxCertificates = 2 })?.code == .limitExceeded)
    }

    @Test func aReceiptLargerThanTheSizeLimitIsLimitExceeded() {
        let der = Hostile.signed(Hostile.manyTinyAttributes(1_000))
        #expect(Self.parse(der, Self.limits { $0.maxSize = der.count }) == nil)
        #expect(Self.parse(der, Self.limits { $0.maxSize = der.count - 1 })?.code == .limitExceeded)
    }

    @Test func jsonDeeperThanTheScannerLimitIsInvalidJSON() {
        func scan(_ depth: Int) -> NDJSONRecord {
            // `depth` containers in all: the object plus depth - 1 arrays.
            let line =
                #"{"receipt-data":"AAAA","x":"# + String(repeating: "[", count: depth - 1)
                + String(repeating: "]", count: depth - 1) + "}"
            return Array(line.utf8).withUnsafeBytes { NDJSONScanner(maxDepth: 64).scan($0) }
        }
        #expect(scan(64).error == nil)
        let over = scan(65)
        #expect(over.error == .invalidJSON)
        #expect("\(over.detail)" == "the JSON nests too deeply")
    }
}
