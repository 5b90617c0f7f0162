import ReceiptModel

/// The run a run on a base continued (`summary.json`'s `base`): its folder as given, its number in the chain and
/// the checksum of the history state it kept, so that a chain of runs can be traced back.
public struct BaseSummary: Sendable, Equatable {
    public var folder: String
    /// The base's number in its chain (1: a run on no base).
    public var run: Int64
    /// The SHA-256 the base's history state ends with (hexadecimal).
    public var stateSHA256: String

    public init(folder: String, run: Int64, stateSHA256: String) {
        self.folder = folder
        self.run = run
        self.stateSHA256 = stateSHA256
    }

    public func jsonValue() -> JSONDocument {
        ["folder": .string(folder), "run": .integer(run), "state_sha256": .string(stateSHA256)]
    }
}
