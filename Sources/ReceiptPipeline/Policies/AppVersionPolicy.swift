import ReceiptModel

/// `--app-version` (repeatable): a record describing an app (a receipt's attribute 3, an app transaction's
/// `applicationVersion`) for another version of the app, or without a version, is rejected (21003). Records that
/// describe no app (JWS transactions, renewal infos, notifications) are not judged by it.
public struct AppVersionPolicy: RecordPolicy {
    let allowed: [[UInt8]]

    public init(_ versions: [String]) { allowed = versions.map { Array($0.utf8) } }

    public func apply(to record: PolicyInput, _ verdict: inout Verdict) {
        guard record.describesApp else { return }
        guard let version = record.applicationVersion, allowed.contains(where: { $0.elementsEqual(version) }) else {
            verdict.reject(
                .wrongAppVersion, .notAuthenticated,
                record.generation == .receipt
                    ? .text("the receipt is for an application version not named by --app-version", at: -1)
                    : .text("the JWS is for an application version not named by --app-version", at: -1))
            return
        }
    }
}
