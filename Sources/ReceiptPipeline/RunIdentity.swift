import Foundation
import ReceiptIO
import ReceiptModel
import ReceiptVerify

/// One input as it was when a run began: enough to notice that a resumed run would read different bytes.
public struct InputFingerprint: Codable, Sendable, Equatable {
    /// As given on the command line (`-` for standard input, which has no fingerprint).
    public var path: String
    public var size: Int?
    /// Modification time in nanoseconds since the epoch.
    public var mtimeNanoseconds: Int64?
    /// SHA-256 of the first `headBytes` bytes (the whole file when it is smaller).
    public var headSHA256: String?
    public var headBytes: Int

    /// How much of each input is hashed: enough to tell regenerated files apart, cheap for thousands of inputs.
    public static let headLimit = 1 << 20

    /// Whether a resumed run can re-read this input and check that it is the same: a regular file.
    public var canResume: Bool { size != nil }

    public init(path: String, size: Int?, mtimeNanoseconds: Int64?, headSHA256: String?, headBytes: Int) {
        self.path = path
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
        self.headSHA256 = headSHA256
        self.headBytes = headBytes
    }

    /// Reads `path`'s size, modification time and the hash of its first MB. Standard input and other files that
    /// are not regular (pipes, devices) get none: they cannot be resumed.
    public static func of(_ path: String) throws(InputError) -> InputFingerprint {
        guard path != "-" else {
            return InputFingerprint(path: path, size: nil, mtimeNanoseconds: nil, headSHA256: nil, headBytes: 0)
        }
        var st = stat()
        guard RawPath.withFileSystemPath(path, { stat($0, &st) }) == 0 else {
            throw InputError(.cannotOpen, input: path, reason: String(cString: strerror(errno)))
        }
        // A pipe or device (`<(zstdcat ...)`, /dev/stdin) cannot be checked without consuming it.
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            return InputFingerprint(path: path, size: nil, mtimeNanoseconds: nil, headSHA256: nil, headBytes: 0)
        }
        let source = try FileByteSource(path: path)
        var head = [UInt8](repeating: 0, count: min(headLimit, max(Int(st.st_size), 0)))
        var filled = 0
        var failure: InputError? = nil
        head.withUnsafeMutableBytes { p in
            while filled < p.count {
                do throws(InputError) {
                    // In range: filled < p.count.
                    let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: p[filled...]))
                    if n == 0 { return }
                    filled += n
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
        let digest = head.withUnsafeBytes { ContentHasher().sha256(UnsafeRawBufferPointer(rebasing: $0[0..<filled])) }
        return InputFingerprint(
            path: path, size: Int(st.st_size),
            mtimeNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
            headSHA256: digest.hex, headBytes: filled)
    }

    enum CodingKeys: String, CodingKey {
        case path, size
        case mtimeNanoseconds = "mtime_ns"
        case headSHA256 = "head_sha256"
        case headBytes = "head_bytes"
    }
}

/// The options that decide what the rows say; a resumed run must use the same ones. (`--threads`, progress and
/// batch sizes do not change rows and may differ.)
public struct RowOptions: Codable, Sendable, Equatable {
    public var field: String?
    public var idField: String?
    public var environment: String
    /// Sorted: the order of `--bundle-id` and `--trust-anchor` does not change any row.
    public var bundleIDs: [String]
    public var verify: Bool
    public var trustAnchorsSHA256: [String]
    public var maxRecordSize: Int
    /// `--app-version` (sorted), `--device-id-field` and `--require-device-match`; nil when not given, so that a
    /// manifest written without them reads as such.
    public var appVersions: [String]?
    public var deviceIDField: String?
    public var requireDeviceMatch: Bool?

    public init(config: PipelineConfig, trustAnchorsSHA256: [String]) {
        appVersions = config.appVersions.isEmpty ? nil : Array(Set(config.appVersions)).sorted()
        deviceIDField = config.deviceIDField
        requireDeviceMatch = config.requireDeviceMatch ? true : nil
        field = config.field
        idField = config.idField
        environment = config.environment.rawValue
        bundleIDs = Array(Set(config.bundleIDs)).sorted()
        verify = config.verify
        self.trustAnchorsSHA256 = Array(Set(trustAnchorsSHA256.map { $0.lowercased() })).sorted()
        maxRecordSize = config.reader.maxRecordSize
    }

    enum CodingKeys: String, CodingKey {
        case field, environment, verify
        case idField = "id_field"
        case bundleIDs = "bundle_ids"
        case trustAnchorsSHA256 = "trust_anchors_sha256"
        case maxRecordSize = "max_record_size"
        case appVersions = "app_versions"
        case deviceIDField = "device_id_field"
        case requireDeviceMatch = "require_device_match"
    }
}

/// What a run is: tool version, format, inputs and output-changing options. A resumed run must match the
/// manifest's identity exactly, or its rows would differ from those already committed.
public struct RunIdentity: Codable, Sendable, Equatable {
    public var toolVersion: String
    public var format: String
    public var inputs: [InputFingerprint]
    public var options: RowOptions
    /// Every option of the command line that changes output, by name, with its value (`ExportOptions.identity`);
    /// nil for an identity made without a command line.
    public var outputOptions: [String: String]?

    public init(
        toolVersion: String = ReceiptflowVersion.string, format: String, inputs: [InputFingerprint],
        options: RowOptions, outputOptions: [String: String]? = nil
    ) {
        self.toolVersion = toolVersion
        self.format = format
        self.inputs = inputs
        self.options = options
        self.outputOptions = outputOptions
    }

    enum CodingKeys: String, CodingKey {
        case format, inputs, options
        case toolVersion = "tool_version"
        case outputOptions = "output_options"
    }

    /// Why `self` (this command line, now) cannot continue the run recorded as `recorded`; nil when it can.
    public func mismatch(resuming recorded: RunIdentity) -> IdentityMismatch? {
        var commandLine: [String] = []
        var changedFiles: [String] = []
        if toolVersion != recorded.toolVersion {
            commandLine.append("receiptflow is version \(toolVersion), the run began with \(recorded.toolVersion)")
        }
        if format != recorded.format { commandLine.append("--format is \(format), the run used \(recorded.format)") }
        let now = inputs.map(\.path)
        let then = recorded.inputs.map(\.path)
        if now != then {
            commandLine.append("the inputs are \(Self.list(now)), the run read \(Self.list(then))")
        } else {
            for (a, b) in zip(inputs, recorded.inputs) where a != b {
                var what: [String] = []
                if a.size != b.size { what.append("size \(Self.text(b.size)) → \(Self.text(a.size)) bytes") }
                if a.mtimeNanoseconds != b.mtimeNanoseconds { what.append("modification time") }
                if a.headSHA256 != b.headSHA256 || a.headBytes != b.headBytes { what.append("content") }
                changedFiles.append("input '\(a.path)' changed since the run began (\(what.joined(separator: ", ")))")
            }
        }
        let o = options
        let r = recorded.options
        func differs(_ name: String, _ now: String, _ then: String) {
            commandLine.append("\(name) is \(now), the run used \(then)")
        }
        if o.field != r.field { differs("--field", Self.text(o.field), Self.text(r.field)) }
        if o.idField != r.idField { differs("--id-field", Self.text(o.idField), Self.text(r.idField)) }
        if o.environment != r.environment { differs("--environment", o.environment, r.environment) }
        if o.bundleIDs != r.bundleIDs { differs("--bundle-id", Self.list(o.bundleIDs), Self.list(r.bundleIDs)) }
        if o.appVersions != r.appVersions {
            differs("--app-version", Self.list(o.appVersions ?? []), Self.list(r.appVersions ?? []))
        }
        if o.deviceIDField != r.deviceIDField {
            differs("--device-id-field", Self.text(o.deviceIDField), Self.text(r.deviceIDField))
        }
        if o.requireDeviceMatch != r.requireDeviceMatch {
            differs(
                "--require-device-match", o.requireDeviceMatch == true ? "given" : "not given",
                r.requireDeviceMatch == true ? "given" : "not given")
        }
        if o.verify != r.verify {
            commandLine.append(
                o.verify ? "--no-verify is missing; the run used it" : "--no-verify was not used by the run")
        }
        if o.trustAnchorsSHA256 != r.trustAnchorsSHA256 {
            differs(
                "--trust-anchor (SHA-256)", Self.list(o.trustAnchorsSHA256), Self.list(r.trustAnchorsSHA256))
        }
        if o.maxRecordSize != r.maxRecordSize {
            differs("--max-record-size", String(o.maxRecordSize), String(r.maxRecordSize))
        }
        // The command line's options, each named once (the row options above already named some of them).
        if outputOptions != nil || recorded.outputOptions != nil {
            let now = outputOptions ?? [:]
            let then = recorded.outputOptions ?? [:]
            for name in Set(now.keys).union(then.keys).sorted() where now[name] != then[name] {
                if commandLine.contains(where: { $0.hasPrefix(name + " ") }) { continue }
                differs(name, Self.text(now[name]), Self.text(then[name]))
            }
        }
        if commandLine.isEmpty && changedFiles.isEmpty { return nil }
        return IdentityMismatch(commandLine: commandLine, changedInputs: changedFiles)
    }

    private static func text(_ v: String?) -> String { v.map { "'\($0)'" } ?? "not given" }
    private static func text(_ v: Int?) -> String { v.map(String.init) ?? "unknown" }
    private static func list(_ v: [String]) -> String { v.isEmpty ? "none" : v.joined(separator: " ") }
}

/// The differences between a run's recorded identity and a command that tries to resume it.
public struct IdentityMismatch: Sendable, Equatable {
    /// Options, inputs or version that differ on the command line (a usage error).
    public var commandLine: [String]
    /// Inputs named the same whose bytes changed (the run cannot be continued).
    public var changedInputs: [String]

    public var reasons: [String] { commandLine + changedInputs }
}
