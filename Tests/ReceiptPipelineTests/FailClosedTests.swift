import Foundation
import ReceiptDER
import ReceiptJWS
import ReceiptModel
import ReceiptSynth
import ReceiptVerify
import Testing

@testable import ReceiptPipeline

/// One fail-closed rule for both generations: when the run verifies, a record whose chain fails (so that its
/// signature is left unchecked) is rejected even by a policy list without the trust policies, which would otherwise
/// be the ones to reject it.
@Suite struct FailClosedTests {
    /// A receipt and an app transaction with the same facts, each signed under a root the run does not trust.
    static let facts = RecordFacts(receiptChain: .foreignCA, jwsChain: .otherRoot)

    @Test func aReceiptWithAnUncheckedSignatureIsRejectedWithoutTrustPolicies() throws {
        let der = Self.facts.receipt(RecordPolicyTests.receiptPKI)
        let cache = try RecordPolicyTests.cache()
        let parser = ReceiptParser()
        let judge = { (policies: [any RecordPolicy]) in
            der.withUnsafeBytes {
                ReceiptEvaluator(verifier: ReceiptVerifier(cache: cache), policies: policies).evaluate($0, with: parser)
            }
        }
        let bare = judge([])
        #expect(bare.code == .untrustedChain)
        #expect(bare.detail.text(code: .untrustedChain) == "\(Verdict.unchecked)")
        #expect(!bare.verified)
        // The trust policies give the specific reason first.
        #expect(judge(PipelineConfig.trustPolicies).code == .untrustedChain)
        #expect(judge(PipelineConfig.trustPolicies).detail.text(code: .untrustedChain) != "\(Verdict.unchecked)")
        // Without verification there is nothing to fail closed on.
        let unverified = der.withUnsafeBytes {
            ReceiptEvaluator(verifier: nil, policies: []).evaluate($0, with: parser)
        }
        #expect(unverified.code == nil)
    }

    @Test func anAppTransactionWithAnUncheckedSignatureIsRejectedWithoutTrustPolicies() throws {
        let text = JWSFactory(pki: RecordPolicyTests.jwsPKI).sign(Self.facts.appTransaction, kind: Self.facts.jwsChain)
        let anchors = try RecordPolicyTests.cache().anchors
        let decoded = JWSEvaluator(verifier: JWSVerifier(anchors: anchors), trust: []).evaluate(text)
        // Verification established facts for the policies to judge and checked no signature.
        #expect(decoded.code == nil)
        #expect(!decoded.verified)
        #expect(decoded.trust != nil)
        let bare = JWSJudge(policies: []).judge(decoded, inherited: nil).verdict
        #expect(bare.code == .untrustedChain)
        #expect(bare.detail == "\(Verdict.unchecked)")
        let trusted = JWSJudge(policies: PipelineConfig.trustPolicies).judge(decoded, inherited: nil).verdict
        #expect(trusted.code == .untrustedChain)
        #expect(trusted.detail != "\(Verdict.unchecked)")
        // Without verification there is nothing to fail closed on.
        let unverified = JWSEvaluator(verifier: nil, trust: []).evaluate(text)
        #expect(JWSJudge(policies: []).judge(unverified, inherited: nil).verdict.code == nil)
    }
}
