import ReceiptModel
import Testing

@testable import ReceiptReport

/// Every error code the tool emits has a meaning and an action, and no two codes share a meaning.
@Suite struct ErrorExplanationsTests {
    @Test func everyCodeIsExplainedWithAnAction() {
        let all = ErrorCode.allCases.map(ErrorExplanations.explain)
        #expect(all.allSatisfy { !$0.meaning.isEmpty && !$0.action.isEmpty })
        #expect(Set(all.map(\.meaning)).count == ErrorCode.allCases.count)
    }

    @Test func subscriptionStatesAreExplainedAndUnknownSaysWhy() {
        #expect(SubscriptionStates.ordered.allSatisfy { !SubscriptionStates.meaning($0).isEmpty })
        #expect(SubscriptionStates.meaning("unknown").contains("never their absence"))
    }
}
