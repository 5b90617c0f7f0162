import ReceiptModel

/// `--environment production|sandbox`: a record of any other environment (`RecordEnvironment`: StoreKit testing
/// and no environment included) is rejected with 21007 under `production`, 21008 under `sandbox`.
public struct EnvironmentPolicy: RecordPolicy {
    public let requirement: EnvironmentRequirement

    public init(requirement: EnvironmentRequirement) { self.requirement = requirement }

    public func apply(to record: PolicyInput, _ verdict: inout Verdict) {
        guard let status = requirement.rejection(record.environment) else { return }
        verdict.reject(.wrongEnvironment, status, .text(Self.detail(record, requirement), at: -1))
    }

    /// The sentence naming the record's environment and the one required (static text: no allocation).
    static func detail(_ record: PolicyInput, _ requirement: EnvironmentRequirement) -> StaticString {
        let receipt = record.generation == .receipt
        if requirement == .sandbox {
            switch record.environment {
            case .absent:
                return receipt
                    ? "a receipt naming no environment where --environment sandbox was required"
                    : "a JWS naming no environment where --environment sandbox was required"
            case .xcode, .localTesting:
                return receipt
                    ? "a StoreKit testing receipt (Xcode or LocalTesting) where --environment sandbox was required"
                    : "a StoreKit testing JWS (Xcode or LocalTesting) where --environment sandbox was required"
            default:
                return receipt
                    ? "a production receipt where --environment sandbox was required"
                    : "a production JWS where --environment sandbox was required"
            }
        }
        switch record.environment {
        case .absent:
            return receipt
                ? "a receipt naming no environment where --environment production was required"
                : "a JWS naming no environment where --environment production was required"
        case .xcode, .localTesting:
            return receipt
                ? "a StoreKit testing receipt (Xcode or LocalTesting) where --environment production was required"
                : "a StoreKit testing JWS (Xcode or LocalTesting) where --environment production was required"
        default:
            return receipt
                ? "a sandbox receipt where --environment production was required"
                : "a sandbox JWS where --environment production was required"
        }
    }
}
