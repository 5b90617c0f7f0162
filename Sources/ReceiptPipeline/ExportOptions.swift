/// One option of `receiptflow export`: its name, whether it takes a value, and whether it changes what the run
/// writes. Each option is declared once, here: the command line is read from this list, and the options that
/// change output are recorded in a parts run's identity and checked on `--resume`. An option cannot be added
/// without saying which it is.
public struct ExportOption: Sendable {
    public enum Kind: Sendable, Equatable {
        /// Takes no value.
        case flag
        /// Takes one value; the last one given counts.
        case value
        /// Takes a value and may be repeated; the set of values counts, not their order.
        case repeated
    }

    public enum Effect: Sendable, Equatable {
        /// Changes the rows or files written; `unset` is how the identity records the option when it is not
        /// given.
        case output(unset: String)
        /// The part size: recorded as the manifest's `part_records` and checked against it (a resumed run may
        /// leave it out).
        case partSize
        /// Does not change what is written (`why`, for the reader of this list).
        case none(why: String)
    }

    public let name: String
    public let kind: Kind
    public let effect: Effect

    public init(_ name: String, _ kind: Kind, _ effect: Effect) {
        self.name = name
        self.kind = kind
        self.effect = effect
    }

    public var changesOutput: Bool {
        if case .output = effect { return true }
        return false
    }
}

/// The options of `receiptflow export`.
public enum ExportOptions {
    public static let all: [ExportOption] = [
        ExportOption("--format", .value, .output(unset: "parquet")),
        ExportOption("--field", .value, .output(unset: "not given")),
        ExportOption("--id-field", .value, .output(unset: "id")),
        ExportOption("--environment", .value, .output(unset: "any")),
        ExportOption("--bundle-id", .repeated, .output(unset: "none")),
        ExportOption("--app-version", .repeated, .output(unset: "none")),
        ExportOption("--device-id-field", .value, .output(unset: "not given")),
        ExportOption("--require-device-match", .flag, .output(unset: "not given")),
        ExportOption("--no-verify", .flag, .output(unset: "not given")),
        // Recorded as the anchors' SHA-256 (the built-in roots' when none is given), not their paths.
        ExportOption("--trust-anchor", .repeated, .output(unset: "none")),
        ExportOption("--max-record-size", .value, .output(unset: "not given")),
        ExportOption("--as-of", .value, .output(unset: "the newest contributing receipt")),
        ExportOption("--no-history", .flag, .output(unset: "not given")),
        // Recorded as the checksum of the base's history state, not its path.
        ExportOption("--base", .value, .output(unset: "none")),
        ExportOption("--report", .flag, .output(unset: "not given")),
        ExportOption("--csv-raw", .flag, .output(unset: "not given")),
        ExportOption("--part-records", .value, .partSize),
        ExportOption("--out", .value, .none(why: "the folder written to, held by the manifest itself")),
        ExportOption("--threads", .value, .none(why: "rows are the same with any number of workers")),
        ExportOption("--progress", .flag, .none(why: "standard error only")),
        ExportOption("--quiet", .flag, .none(why: "standard error only")),
        ExportOption("--resume", .flag, .none(why: "how the run is continued")),
        ExportOption("--overwrite", .flag, .none(why: "what happens to an earlier run's files")),
        ExportOption("--max-reject-rate", .value, .none(why: "the exit status only")),
    ]

    /// The options that take no value.
    public static var flags: Set<String> { Set(all.filter { $0.kind == .flag }.map(\.name)) }
    /// The options that take a value.
    public static var valued: Set<String> { Set(all.filter { $0.kind != .flag }.map(\.name)) }
    /// The options that may be given more than once.
    public static var repeatable: Set<String> { Set(all.filter { $0.kind == .repeated }.map(\.name)) }

    /// The identity of a run's output options: every option that changes output, by name, with its value.
    ///
    /// - Parameters:
    ///   - given: the values given for an option (for a flag, one empty string per time it was given).
    ///   - canonical: values that stand for what was given where the text is not the meaning (the format in
    ///     effect, a date in one notation, the trust anchors' digests).
    public static func identity(given: (String) -> [String], canonical: [String: String]) -> [String: String] {
        var out: [String: String] = [:]
        for option in all {
            guard case .output(let unset) = option.effect else { continue }
            if let c = canonical[option.name] {
                out[option.name] = c
                continue
            }
            let values = given(option.name)
            switch option.kind {
            case .flag: out[option.name] = values.isEmpty ? unset : "given"
            case .value: out[option.name] = values.last ?? unset
            case .repeated: out[option.name] = values.isEmpty ? unset : Set(values).sorted().joined(separator: " ")
            }
        }
        return out
    }
}
