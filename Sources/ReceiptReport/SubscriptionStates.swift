/// The states of the `subscriptions` table, in the order the report lists them, with what each means.
public enum SubscriptionStates {
    public static let ordered = [
        "active", "grace_period", "billing_retry", "expired", "revoked", "not_started", "unknown",
    ]

    /// The position of `state` in `ordered`; states the report does not know come last.
    public static func rank(_ state: String) -> Int { ordered.firstIndex(of: state) ?? ordered.count }

    /// What `state` means at the as-of time.
    public static func meaning(_ state: String) -> String {
        switch state {
        case "active": return "A period not cancelled covers the as-of time."
        case "grace_period": return "The App Store is retrying the billing; the customer keeps the service."
        case "billing_retry": return "The App Store is retrying the billing; the service has stopped."
        case "expired": return "A record made after the last expiry shows no renewal."
        case "revoked": return "The latest period was cancelled (a refund or an upgrade)."
        case "not_started": return "No period had begun at the as-of time."
        case "unknown":
            return "The last period has ended and no record made after it was seen: the subscription may have "
                + "renewed without a receipt showing it. Receipts prove renewals, never their absence; a later "
                + "receipt or a renewal info (JWS) of the subscription would settle it."
        default: return ""
        }
    }
}
