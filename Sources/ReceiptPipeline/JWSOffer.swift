/// A JWS transaction's offer (`offerType`, `offerDiscountType`, `offerIdentifier`) and what it means in a
/// receipt's terms, so that a purchase's history does not change with the generation it was seen in
/// (docs/history.md, "Offers of JWS transactions").
struct JWSOffer: Equatable {
    /// 1 introductory offer, 2 promotional offer, 3 offer code, 4 win-back offer.
    let type: Int32?
    /// `FREE_TRIAL`, `PAY_AS_YOU_GO` or `PAY_UP_FRONT`; absent from older JWS.
    let discountType: String?
    let identifier: String?

    /// A free trial: an introductory offer whose discount is `FREE_TRIAL`; unknown (nil) for an introductory
    /// offer that does not name its discount.
    var isTrialPeriod: Bool? {
        guard type == 1 else { return false }
        guard let discountType else { return nil }
        return discountType == "FREE_TRIAL"
    }

    /// An introductory price: an introductory offer paid as you go or up front, or one naming no discount.
    var isInIntroOfferPeriod: Bool {
        guard type == 1 else { return false }
        guard let discountType else { return true }
        return discountType == "PAY_AS_YOU_GO" || discountType == "PAY_UP_FRONT"
    }

    /// The promotional offer's identifier: `offerIdentifier` of a promotional offer, else nil.
    var promotionalOfferID: String? { type == 2 ? identifier : nil }
}
