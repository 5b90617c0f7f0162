import ReceiptVerify

/// The trust policies (defined beside the verifiers, which apply the same values when used on their own) as
/// members of the run's policy list: each judges the record's `PolicyInput.trust` and rejects it with the failure's
/// code, its status and its sentence. A record without trust facts (`--no-verify`) or already rejected is left as
/// it is (the sentence is built only for a rejection).
extension TrustPolicy {
    func applyTrust(to record: PolicyInput, _ verdict: inout Verdict) {
        guard verdict.code == nil, let facts = record.trust, let failure = judge(facts) else { return }
        verdict.reject(failure.code, failure.code.status, .string(failure.sentence(facts)))
    }
}

extension TrustedChainPolicy: RecordPolicy {
    public func apply(to record: PolicyInput, _ verdict: inout Verdict) { applyTrust(to: record, &verdict) }
}

extension ApplePolicyOIDsPolicy: RecordPolicy {
    public func apply(to record: PolicyInput, _ verdict: inout Verdict) { applyTrust(to: record, &verdict) }
}

extension ValidAtSigningTimePolicy: RecordPolicy {
    public func apply(to record: PolicyInput, _ verdict: inout Verdict) { applyTrust(to: record, &verdict) }
}
