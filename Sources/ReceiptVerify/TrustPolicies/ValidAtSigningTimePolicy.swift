/// Every certificate of the chain was valid at the record's own signing time: `certificate_expired` after the
/// first to end, `certificate_not_yet_valid` before the last to begin, `malformed_attribute` when the record has
/// no signing time (a receipt without a creation date).
public struct ValidAtSigningTimePolicy: TrustPolicy {
    public init() {}

    public func judge(_ facts: TrustFacts) -> TrustFailure? {
        guard let time = facts.signedAt else { return TrustFailure(.noSigningTime) }
        if time > facts.chain.validUntil { return TrustFailure(.expired) }
        if time < facts.chain.validFrom { return TrustFailure(.notYetValid) }
        return nil
    }
}
