import ReceiptModel

/// `--environment production|sandbox`: a receipt of the other environment is rejected with 21007 or 21008.
public struct EnvironmentPolicy: ReceiptPolicy {
    public let requirement: EnvironmentRequirement

    public init(requirement: EnvironmentRequirement) { self.requirement = requirement }

    public func apply(to receipt: PolicyInput, _ verdict: inout Verdict) {
        guard let status = requirement.rejection(receiptType: receipt.bytes(receipt.fields.receiptType)) else {
            return
        }
        verdict.reject(
            .wrongEnvironment, status,
            status == .sandboxReceiptInProduction
                ? .text("a sandbox receipt where --environment production was required", at: -1)
                : .text("a production receipt where --environment sandbox was required", at: -1))
    }
}
