/// The decoded payloads of the App Store Server API's JWS as the generator writes them: a transaction
/// (`JWSTransactionDecodedPayload`), a renewal info (`JWSRenewalInfoDecodedPayload`) and a notification V2
/// (`ResponseBodyV2DecodedPayload`), with Apple's field names and types (dates in epoch milliseconds, prices in
/// milli-units).
enum JWSPayloads {
    /// One StoreKit 2 transaction: the facts a payload and the expected tables are both made from.
    struct Transaction: Sendable {
        var bundleID: String
        var productID: String
        /// The catalog's product type: 0 non-consumable, 1 consumable, 2 non-renewing, 3 auto-renewable.
        var productType: Int64
        var transactionID: String
        /// Nil writes no `originalTransactionId` (as the few receipt entries without attribute 1705).
        var originalTransactionID: String?
        var purchaseDate: Int64
        var originalPurchaseDate: Int64
        var expiresDate: Int64?
        var webOrderLineItemID: Int64?
        var quantity: Int64
        var environment: String
        var signedDate: Int64
        var revocationDate: Int64? = nil
        var revocationReason: Int64? = nil
        var isUpgraded = false
        var offerType: Int64? = nil
        /// `FREE_TRIAL`, `PAY_AS_YOU_GO` or `PAY_UP_FRONT` (nil: left out, as in older JWS).
        var offerDiscountType: String? = nil
        var offerIdentifier: String? = nil
        var appAccountToken: String? = nil
        var price: Int64
        var renewal = false

        /// The subscription group of an auto-renewable product: its app's bundle id.
        var subscriptionGroup: String? { productType == 3 ? bundleID + ".group" : nil }

        var payload: [String: Any] {
            var p: [String: Any] = [
                "transactionId": transactionID, "bundleId": bundleID, "productId": productID,
                "purchaseDate": purchaseDate,
                "originalPurchaseDate": originalPurchaseDate, "quantity": quantity,
                "type": ["Non-Consumable", "Consumable", "Non-Renewing Subscription", "Auto-Renewable Subscription"][
                    Int(productType)],
                "inAppOwnershipType": "PURCHASED", "signedDate": signedDate, "environment": environment,
                "transactionReason": renewal ? "RENEWAL" : "PURCHASE", "storefront": "USA", "storefrontId": "143441",
                "price": price, "currency": "USD",
            ]
            if let o = originalTransactionID { p["originalTransactionId"] = o }
            if let e = expiresDate { p["expiresDate"] = e }
            if let w = webOrderLineItemID { p["webOrderLineItemId"] = String(w) }
            if let g = subscriptionGroup { p["subscriptionGroupIdentifier"] = g }
            if let r = revocationDate { p["revocationDate"] = r }
            if let r = revocationReason { p["revocationReason"] = r }
            if isUpgraded { p["isUpgraded"] = true }
            if let o = offerType { p["offerType"] = o }
            if let d = offerDiscountType { p["offerDiscountType"] = d }
            if let o = offerIdentifier { p["offerIdentifier"] = o }
            if let a = appAccountToken { p["appAccountToken"] = a }
            return p
        }
    }

    /// The renewal info of an auto-renewable transaction, signed at `signedDate`.
    static func renewal(of t: Transaction, signedDate: Int64, autoRenew: Bool) -> [String: Any] {
        var p: [String: Any] = [
            "originalTransactionId": t.originalTransactionID ?? t.transactionID, "autoRenewProductId": t.productID,
            "productId": t.productID, "autoRenewStatus": autoRenew ? 1 : 0, "signedDate": signedDate,
            "environment": t.environment, "recentSubscriptionStartDate": t.originalPurchaseDate,
            "renewalPrice": t.price, "currency": "USD",
        ]
        if let e = t.expiresDate { p["renewalDate"] = e }
        if !autoRenew { p["expirationIntent"] = 1 }
        return p
    }

    /// The notification type Apple sends about `t`: a refund, a first subscription or a renewal, or a one-time
    /// charge.
    static func notificationType(of t: Transaction) -> String {
        if t.revocationDate != nil { return "REFUND" }
        if t.productType == 3 { return t.renewal ? "DID_RENEW" : "SUBSCRIBED" }
        return "ONE_TIME_CHARGE"
    }

    /// A notification V2 about `t`: its `data` carries the app and the nested signed transaction (and renewal
    /// info, when given).
    static func notification(
        type: String, uuid: String, signedDate: Int64, appAppleID: Int64?, t: Transaction, transactionJWS: String,
        renewalJWS: String?
    ) -> [String: Any] {
        var data: [String: Any] = [
            "bundleId": t.bundleID, "bundleVersion": "1", "environment": t.environment,
            "signedTransactionInfo": transactionJWS,
        ]
        if let appAppleID { data["appAppleId"] = appAppleID }
        if let renewalJWS {
            data["signedRenewalInfo"] = renewalJWS
            data["status"] = 1
        }
        return [
            "notificationType": type, "notificationUUID": uuid, "version": "2.0", "signedDate": signedDate,
            "data": data,
        ]
    }
}
