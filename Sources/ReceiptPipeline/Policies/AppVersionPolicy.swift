import ReceiptModel

/// `--app-version` (repeatable): a receipt for another version of the app (attribute 3), or without one, is
/// rejected (21003).
public struct AppVersionPolicy: ReceiptPolicy {
    let allowed: [[UInt8]]

    public init(_ versions: [String]) { allowed = versions.map { Array($0.utf8) } }

    public func apply(to receipt: PolicyInput, _ verdict: inout Verdict) {
        let version = receipt.bytes(receipt.fields.applicationVersion)
        guard let version, allowed.contains(where: { $0.elementsEqual(version) }) else {
            verdict.reject(
                .wrongAppVersion, .notAuthenticated,
                .text("the receipt is for an application version not named by --app-version", at: -1))
            return
        }
    }
}
