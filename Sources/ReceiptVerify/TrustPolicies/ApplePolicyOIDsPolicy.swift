/// Apple's certificate policy: the leaf carries the signing OID and the intermediates the WWDR OID
/// (`certificate_policy` otherwise).
public struct ApplePolicyOIDsPolicy: TrustPolicy {
    public init() {}

    public func judge(_ facts: TrustFacts) -> TrustFailure? {
        facts.chain.policyOIDsOK ? nil : TrustFailure(.policy)
    }
}
