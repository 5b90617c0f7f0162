import ReceiptModel

/// `--bundle-id` (repeatable): a receipt for another app, or without a bundle id, is rejected (21003).
public struct BundleIDPolicy: ReceiptPolicy {
    let allowed: [[UInt8]]

    public init(_ bundleIDs: [String]) { allowed = bundleIDs.map { Array($0.utf8) } }

    public func apply(to receipt: PolicyInput, _ verdict: inout Verdict) {
        let bundle = receipt.bytes(receipt.fields.bundleID)
        guard let bundle, allowed.contains(where: { $0.elementsEqual(bundle) }) else {
            verdict.reject(
                .wrongBundleID, .notAuthenticated, .text("the receipt is for an app not named by --bundle-id", at: -1))
            return
        }
    }
}
