import ReceiptDER
import ReceiptModel

/// One of the run's checks on a receipt that parsed (and, unless `--no-verify`, was verified): it reads the
/// receipt and rejects it through the verdict, or leaves the verdict as it is. Policies are small values applied
/// in order by `ReceiptEvaluator`; they must not allocate.
public protocol ReceiptPolicy: Sendable {
    func apply(to receipt: PolicyInput, _ verdict: inout Verdict)
}

/// What a policy sees: the parsed receipt's payload and fields, and what its record says about its device.
public struct PolicyInput {
    /// The receipt payload (the encapsulated content); the ranges of `fields` index it.
    public let payload: UnsafeRawBufferPointer
    public let fields: ReceiptFields
    public let device: RecordDevice

    /// The bytes of `range` in the payload, or nil when absent or (defensively) out of range.
    @inline(__always) public func bytes(_ range: Range<Int>?) -> UnsafeRawBufferPointer? {
        RowBytes.text(range, in: payload)
    }
}

extension PipelineConfig {
    /// The run's policies in the order they apply: environment, bundle id, application version, the int32
    /// columns' range, then the device hash. Options not given add no policy.
    public var policies: [any ReceiptPolicy] {
        var p: [any ReceiptPolicy] = []
        if environment != .any { p.append(EnvironmentPolicy(requirement: environment)) }
        if !bundleIDs.isEmpty { p.append(BundleIDPolicy(bundleIDs)) }
        if !appVersions.isEmpty { p.append(AppVersionPolicy(appVersions)) }
        p.append(Int32FitPolicy())
        if deviceIDField != nil { p.append(DeviceHashPolicy(required: requireDeviceMatch)) }
        return p
    }
}

extension PipelineConfig {
    /// The policies of `inspect`, which takes no environment or bundle options: the int32 columns' range.
    public static var inspectPolicies: [any ReceiptPolicy] { [Int32FitPolicy()] }
}
