import ReceiptDER
import ReceiptModel
import ReceiptVerify

/// One of the run's checks on a record that was read (and, unless `--no-verify`, whose signature was checked):
/// it reads the facts of the record and rejects it through the verdict, or leaves the verdict as it is. The list
/// starts with the trust policies (the chain ends at an anchor, carries Apple's OIDs and was valid at the record's
/// own signing time), which judge what the verifiers established. Receipts and JWS go through the same list of policies
/// (`PipelineConfig.policies`), so that the same facts get the same verdict whatever the record's generation.
/// Policies are small values applied in order (`apply(to:_:)` on the list); they must not allocate.
public protocol RecordPolicy: Sendable {
    func apply(to record: PolicyInput, _ verdict: inout Verdict)
}

/// What a policy sees of a record, whatever its generation: its environment, bundle id and application version,
/// what its line says about its device, and, for a receipt, the parsed payload (which only receipt policies read).
public struct PolicyInput {
    /// A receipt (PKCS #7) or a JWS: chooses the wording of a rejection's detail.
    public enum Generation: Sendable, Equatable {
        case receipt
        case jws
    }

    public let generation: Generation
    public let environment: RecordEnvironment
    /// The bundle id's bytes; nil when the record names none.
    public let bundleID: UnsafeRawBufferPointer?
    /// Whether the record describes an installed app and so has an application version to judge: receipts and
    /// app transactions do; JWS transactions, renewal infos and notifications do not.
    public let describesApp: Bool
    /// The application version's bytes (receipt attribute 3, an app transaction's `applicationVersion`); nil when
    /// absent.
    public let applicationVersion: UnsafeRawBufferPointer?
    public let device: RecordDevice
    /// The parsed receipt; nil for a JWS.
    public let receipt: ReceiptContent?
    /// The worker's digest context, for policies that hash (the device hash); nil for a JWS.
    public let hasher: ContentHasher?
    /// What the verifier established for the trust policies (the chain, the signing time); nil with
    /// `--no-verify`, or when verification rejected the record before its chain was known.
    public let trust: TrustFacts?

    /// The facts of a parsed receipt, with the worker's `hasher`.
    public init(
        receipt payload: UnsafeRawBufferPointer, fields: ReceiptFields, device: RecordDevice, hasher: ContentHasher,
        trust: TrustFacts?
    ) {
        let content = ReceiptContent(payload: payload, fields: fields)
        generation = .receipt
        environment = RecordEnvironment(content.bytes(fields.receiptType))
        bundleID = content.bytes(fields.bundleID)
        describesApp = true
        applicationVersion = content.bytes(fields.applicationVersion)
        self.device = device
        receipt = content
        self.hasher = hasher
        self.trust = trust
    }

    /// The facts of a decoded JWS (the device hash is a receipt attribute: a JWS has none to check).
    public init(
        jwsEnvironment environment: RecordEnvironment, bundleID: UnsafeRawBufferPointer?, describesApp: Bool,
        applicationVersion: UnsafeRawBufferPointer?, trust: TrustFacts?
    ) {
        generation = .jws
        self.environment = environment
        self.bundleID = bundleID
        self.describesApp = describesApp
        self.applicationVersion = applicationVersion
        device = .absent
        receipt = nil
        hasher = nil
        self.trust = trust
    }
}

/// A parsed receipt as policies read it: the payload and the fields whose ranges index it.
public struct ReceiptContent {
    /// The receipt payload (the encapsulated content).
    public let payload: UnsafeRawBufferPointer
    public let fields: ReceiptFields

    /// The bytes of `range` in the payload, or nil when absent or (defensively) out of range.
    @inline(__always) public func bytes(_ range: Range<Int>?) -> UnsafeRawBufferPointer? {
        RowBytes.text(range, in: payload)
    }
}

extension Array where Element == any RecordPolicy {
    /// Applies every policy in order to `record` (the first rejection stays; later policies still record what
    /// they find, such as `device_hash_matches`).
    public func apply(to record: PolicyInput, _ verdict: inout Verdict) {
        for policy in self { policy.apply(to: record, &verdict) }
    }

    /// The judging step of every record, receipt or JWS: the policies in order (`apply(to:_:)`), then the one
    /// fail-closed rule (`Verdict.failClosed`). `verifying` says whether the run checks signatures, and
    /// `signatureVerified` whether this record's was checked and good.
    func judge(_ record: PolicyInput, verifying: Bool, signatureVerified: Bool, _ verdict: inout Verdict) {
        apply(to: record, &verdict)
        verdict.failClosed(verifying: verifying, signatureVerified: signatureVerified)
    }
}

extension PipelineConfig {
    /// The run's policies in the order they apply: the trust policies (`trustPolicies`), environment, bundle id,
    /// application version, the int32 columns' range, then the device hash. Options not given add no policy. The
    /// same list judges receipts and JWS; the last two read receipts only.
    public var policies: [any RecordPolicy] {
        var p = Self.trustPolicies
        if environment != .any { p.append(EnvironmentPolicy(requirement: environment)) }
        if !bundleIDs.isEmpty { p.append(BundleIDPolicy(bundleIDs)) }
        if !appVersions.isEmpty { p.append(AppVersionPolicy(appVersions)) }
        p.append(Int32FitPolicy())
        if deviceIDField != nil { p.append(DeviceHashPolicy(required: requireDeviceMatch)) }
        return p
    }
}

extension PipelineConfig {
    /// The policies of `inspect`, which takes no environment or bundle options: the trust policies and the int32
    /// columns' range.
    public static var inspectPolicies: [any RecordPolicy] { trustPolicies + [Int32FitPolicy()] }

    /// The head of every list: the chain ends at a configured anchor, carries Apple's OIDs, and was valid at the
    /// record's own signing time. They judge only verified records (with `--no-verify` there is nothing to judge).
    public static var trustPolicies: [any RecordPolicy] {
        [TrustedChainPolicy(), ApplePolicyOIDsPolicy(), ValidAtSigningTimePolicy()]
    }
}
