import ReceiptModel
import Testing

@Suite("Purchase facts, stored packed")
struct PurchaseFactsTests {
    @Test("every optional fact reads back the value written, extremes and nil included")
    func readsBackWhatWasWritten() {
        for v: Int64? in [nil, 0, -1, 1_700_000_000_000, Int64.min, Int64.max] {
            var f = PurchaseFacts()
            f.purchaseDate = v
            f.originalPurchaseDate = v
            f.expiresDate = v
            f.webOrderLineItemID = v
            f.cancellationDate = v
            #expect(f.purchaseDate == v && f.originalPurchaseDate == v && f.expiresDate == v)
            #expect(f.webOrderLineItemID == v && f.cancellationDate == v)
        }
        for v: Int32? in [nil, 0, -1, Int32.min, Int32.max] {
            var f = PurchaseFacts()
            f.quantity = v
            f.productType = v
            f.cancellationReason = v
            #expect(f.quantity == v && f.productType == v && f.cancellationReason == v)
        }
        for v: Bool? in [nil, false, true] {
            var f = PurchaseFacts()
            f.isTrialPeriod = v
            f.isInIntroOfferPeriod = v
            f.multipleUserIDs = v
            #expect(f.isTrialPeriod == v && f.isInIntroOfferPeriod == v && f.multipleUserIDs == v)
        }
        for v: TextSpan? in [nil, .empty, TextSpan(offset: 3, count: 9)] {
            var f = PurchaseFacts()
            f.originalTransactionID = v
            f.promotionalOfferID = v
            f.userID = v
            f.appAccountToken = v
            #expect(f.originalTransactionID == v && f.promotionalOfferID == v)
            #expect(f.userID == v && f.appAccountToken == v)
        }
        var f = PurchaseFacts()
        #expect(f.environment == .production)
        f.environment = .sandbox
        #expect(f.environment == .sandbox)
    }

    @Test("a fact set and then cleared leaves the facts equal to ones that never had it")
    func clearingRestoresEquality() {
        let base = PurchaseFacts()
        var f = base
        f.purchaseDate = 5
        f.quantity = -2
        f.isTrialPeriod = true
        f.originalTransactionID = TextSpan(offset: 1, count: 2)
        #expect(!base.sameBeforeOverlay(f))
        f.purchaseDate = nil
        f.quantity = nil
        f.isTrialPeriod = nil
        f.originalTransactionID = nil
        #expect(base.sameBeforeOverlay(f))
        // An absent fact differs from a present zero, false or empty span.
        var zero = base
        zero.purchaseDate = 0
        #expect(!base.sameBeforeOverlay(zero))
        var no = base
        no.isInIntroOfferPeriod = false
        #expect(!base.sameBeforeOverlay(no))
        var empty = base
        empty.promotionalOfferID = .empty
        #expect(!base.sameBeforeOverlay(empty))
    }

    @Test("the facts take no more than 112 bytes")
    func packed() {
        #expect(MemoryLayout<PurchaseFacts>.size <= 112)
    }
}
