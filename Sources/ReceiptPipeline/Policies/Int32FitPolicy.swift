import ReceiptModel

/// A receipt's quantity, product_type and cancellation_reason are int32 columns (contract.md): a value outside that range
/// would become null without a word, so the receipt is rejected as malformed instead.
public struct Int32FitPolicy: RecordPolicy {
    public init() {}

    public func apply(to record: PolicyInput, _ verdict: inout Verdict) {
        guard let f = record.receipt?.fields else { return }
        for k in 0..<min(f.inAppCount, f.inApp.count) {
            let e = f.inApp[k]
            guard Self.fits(e.quantity), Self.fits(e.productType), Self.fits(e.cancellationReason) else {
                verdict.reject(
                    .malformedAttribute, .malformed,
                    .text("an in-app quantity, product type or cancellation reason does not fit 32 bits", at: -1))
                return
            }
        }
    }

    @inline(__always) static func fits(_ v: Int64?) -> Bool {
        guard let v else { return true }
        return v >= Int64(Int32.min) && v <= Int64(Int32.max)
    }
}
