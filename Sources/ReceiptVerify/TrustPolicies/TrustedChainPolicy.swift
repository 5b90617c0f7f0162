/// The record's chain ends at a configured trust anchor (`untrusted_chain` otherwise).
public struct TrustedChainPolicy: TrustPolicy {
    public init() {}

    public func judge(_ facts: TrustFacts) -> TrustFailure? {
        facts.chain.anchored ? nil : TrustFailure(.untrusted)
    }
}
