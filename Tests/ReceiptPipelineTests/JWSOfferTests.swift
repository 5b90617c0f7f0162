import Testing

@testable import ReceiptPipeline

/// A JWS transaction's offer read as a receipt's flags (docs/history.md, "Offers of JWS transactions").
@Suite struct JWSOfferTests {
    @Test(
        "offerType and offerDiscountType map onto the trial and introductory flags",
        arguments: [
            (Int32?.none, String?.none, Bool?.some(false), false),
            (1, "FREE_TRIAL", true, false),
            (1, "PAY_AS_YOU_GO", false, true),
            (1, "PAY_UP_FRONT", false, true),
            (1, nil, nil, true),
            (1, "SOMETHING_NEW", false, false),
            (2, "FREE_TRIAL", false, false),
            (3, nil, false, false),
            (4, "PAY_UP_FRONT", false, false),
        ] as [(Int32?, String?, Bool?, Bool)])
    func flags(type: Int32?, discount: String?, trial: Bool?, intro: Bool) {
        let offer = JWSOffer(type: type, discountType: discount, identifier: "offer-1")
        #expect(offer.isTrialPeriod == trial)
        #expect(offer.isInIntroOfferPeriod == intro)
    }

    @Test("only a promotional offer gives its identifier as the promotional offer id")
    func promotionalOfferID() {
        #expect(JWSOffer(type: 2, discountType: nil, identifier: "promo").promotionalOfferID == "promo")
        for type: Int32? in [nil, 1, 3, 4] {
            #expect(JWSOffer(type: type, discountType: nil, identifier: "promo").promotionalOfferID == nil)
        }
        #expect(JWSOffer(type: 2, discountType: nil, identifier: nil).promotionalOfferID == nil)
    }
}
