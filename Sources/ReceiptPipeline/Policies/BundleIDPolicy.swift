import ReceiptModel

/// `--bundle-id` (repeatable): a record for another app, or without a bundle id, is rejected (21003).
public struct BundleIDPolicy: RecordPolicy {
    let allowed: [[UInt8]]

    public init(_ bundleIDs: [String]) { allowed = bundleIDs.map { Array($0.utf8) } }

    public func apply(to record: PolicyInput, _ verdict: inout Verdict) {
        guard let bundle = record.bundleID, allowed.contains(where: { $0.elementsEqual(bundle) }) else {
            verdict.reject(
                .wrongBundleID, .notAuthenticated,
                record.generation == .receipt
                    ? .text("the receipt is for an app not named by --bundle-id", at: -1)
                    : .text("the JWS is for an app not named by --bundle-id", at: -1))
            return
        }
    }
}
