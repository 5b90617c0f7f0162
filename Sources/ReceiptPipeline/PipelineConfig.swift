import ReceiptIO
import ReceiptModel
import ReceiptSink

/// Which receipt environment a run accepts (`--environment`).
public enum EnvironmentRequirement: String, Sendable, CaseIterable {
    case production
    case sandbox
    case any

    /// The status for a record of `environment` (`RecordEnvironment`), nil when it is accepted: `production`
    /// accepts production records only and rejects every other with 21007; `sandbox` accepts sandbox records only
    /// and rejects every other with 21008; `any` accepts all. StoreKit testing records (`Xcode`, `LocalTesting`)
    /// and records naming no environment pass only `any`.
    public func rejection(_ environment: RecordEnvironment) -> ReceiptStatus? {
        switch self {
        case .production: return environment == .production ? nil : .sandboxReceiptInProduction
        case .sandbox: return environment == .sandbox ? nil : .productionReceiptInSandbox
        case .any: return nil
        }
    }
}

/// Everything the stages need to know about a run, from the command line.
public struct PipelineConfig: Sendable {
    /// Input paths as given (`-` is standard input); read in this order.
    public var inputs: [String] = ["-"]
    /// What standard input is called in `source` and in the history's input names (`--stdin-name`).
    public var stdinName: String = "-"
    /// The receipt key (`--field`); nil for the first of `receipt-data`, `receipt_data`, `receipt` present.
    public var field: String? = nil
    /// The key copied into `record_id` (`--id-field`).
    public var idField: String? = "id"
    /// False for `--no-verify`: decode only, `verified` is false.
    public var verify: Bool = true
    public var environment: EnvironmentRequirement = .any
    /// `--bundle-id`, repeatable; empty accepts any app.
    public var bundleIDs: [String] = []
    /// `--app-version`, repeatable; empty accepts any application version.
    public var appVersions: [String] = []
    /// `--device-id-field`: the key holding each record's device identifier; nil for no device check.
    public var deviceIDField: String? = nil
    /// `--user-field`: the field holding each record's user id of the company (`receipts.user_id` and the
    /// history's user columns); nil when not given.
    public var userField: String? = nil
    /// `--require-device-match`: reject a receipt whose hash is not that of the record's device identifier.
    public var requireDeviceMatch = false
    /// Worker threads (`--threads`).
    public var threads: Int = 1
    public var reader = ReaderOptions()
    /// Batches read but not yet written; memory is bounded by this times the batch size. 0 picks a default.
    public var inFlight: Int = 0
    /// Render `ColumnBatch.ndjson` (for `--format ndjson`).
    public var renderNDJSON = false
    /// A resumed run: every line up to here is in committed parts; reading starts after it.
    public var resumeAfter: InputPosition? = nil

    public init() {}

    /// The name an input goes by in the tables: its path as given, or `stdinName` for standard input.
    public func sourceName(_ path: String) -> String { path == "-" ? stdinName : path }

    /// Batches in flight when `inFlight` is 0: enough to keep every worker busy while the writer works,
    /// but never more than about 160 MB of batch buffers.
    public var effectiveInFlight: Int {
        if inFlight > 0 { return inFlight }
        let byMemory = max(2, (160 << 20) / max(reader.batchCapacity, 1))
        return max(2, min(2 * threads + 2, byMemory))
    }
}
