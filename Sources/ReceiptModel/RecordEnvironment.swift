/// The environment a record comes from: the one classification every consumer uses (the `--environment` policy,
/// the NDJSON `environment` field, the history tables), for receipts and JWS alike.
///
/// A receipt names its environment in `receipt_type` (attribute 0); a JWS in `environment` (or an app
/// transaction's `receiptType`, a notification's `data.environment`). The value is classified as:
/// - `Xcode`: StoreKit testing in Xcode;
/// - `LocalTesting`: StoreKit testing outside the App Store;
/// - ending in `Sandbox` (`Sandbox`, `ProductionSandbox`, `ProductionVPPSandbox`): Apple's sandbox;
/// - absent or empty: no environment;
/// - anything else (`Production`, `ProductionVPP`): production.
///
/// Matching is exact and case-sensitive, as Apple writes the values.
public enum RecordEnvironment: Sendable, Equatable, CaseIterable {
    case production
    case sandbox
    case xcode
    case localTesting
    /// The record names no environment (or an empty one).
    case absent

    /// Classifies the bytes of an environment or receipt type value; nil is an absent value.
    public init(_ value: UnsafeRawBufferPointer?) {
        guard let value, !value.isEmpty else {
            self = .absent
            return
        }
        let sandbox = "Sandbox".utf8
        if value.elementsEqual("Xcode".utf8) {
            self = .xcode
        } else if value.elementsEqual("LocalTesting".utf8) {
            self = .localTesting
        } else if value.count >= sandbox.count && value[(value.count - sandbox.count)...].elementsEqual(sandbox) {
            self = .sandbox
        } else {
            self = .production
        }
    }

    /// Classifies an environment or receipt type value; nil is an absent value.
    public init(_ value: String?) {
        guard var value else {
            self = .absent
            return
        }
        self = value.withUTF8 { RecordEnvironment(UnsafeRawBufferPointer($0)) }
    }

    /// The name the outputs give the class: `Production`, `Sandbox`, `Xcode`, `LocalTesting`; nil when absent.
    public var name: String? {
        switch self {
        case .production: return "Production"
        case .sandbox: return "Sandbox"
        case .xcode: return "Xcode"
        case .localTesting: return "LocalTesting"
        case .absent: return nil
        }
    }

    /// StoreKit testing (`Xcode`, `LocalTesting`): its purchases never reached the App Store, so they never count
    /// in the history tables.
    public var isStoreKitTesting: Bool { self == .xcode || self == .localTesting }
}
