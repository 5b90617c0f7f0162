import Foundation
import ReceiptModel
import ReceiptSink

/// A place in a run's input: line `line` of input number `source` (0-based, in command-line order).
/// Line 0 is the start of a source, before its first line.
public struct InputPosition: Codable, Sendable, Equatable, Comparable, CustomStringConvertible {
    public var source: Int
    public var line: Int

    public init(source: Int, line: Int) {
        self.source = source
        self.line = line
    }

    public static func < (a: InputPosition, b: InputPosition) -> Bool {
        (a.source, a.line) < (b.source, b.line)
    }

    public var description: String { "input \(source) line \(line)" }
}

/// Where a resumed run continues: every line up to `position` is in committed parts.
public struct ResumePoint: Codable, Sendable, Equatable {
    public var position: InputPosition
    /// Input bytes of `position.source` the committed parts counted (compressed bytes for zstd). A resumed run
    /// re-reads that source from its start and counts only what lies beyond, so `bytes_read` matches a clean run.
    public var sourceBytes: Int

    public init(position: InputPosition = InputPosition(source: 0, line: 0), sourceBytes: Int = 0) {
        self.position = position
        self.sourceBytes = sourceBytes
    }

    enum CodingKeys: String, CodingKey {
        case position
        case sourceBytes = "source_bytes"
    }
}

/// `BatchCounts` in a stable JSON shape: statuses and error codes by name, not by position.
public struct StoredCounts: Codable, Sendable, Equatable {
    public var records = 0
    public var transactions = 0
    public var blankLines = 0
    public var inputBytes = 0
    public var byStatus: [String: Int] = [:]
    public var byErrorCode: [String: Int] = [:]
    /// JWS rows and valid JWS rows (absent in manifests written before they were counted: read as 0).
    public var jws: Int? = nil
    public var jwsValid: Int? = nil

    public init(_ c: BatchCounts) {
        records = c.records
        transactions = c.transactions
        blankLines = c.blankLines
        inputBytes = c.inputBytes
        jws = c.jws
        jwsValid = c.jwsValid
        for (i, s) in ReceiptStatus.allCases.enumerated() where c.byStatus[i] != 0 {
            byStatus[String(s.rawValue)] = c.byStatus[i]
        }
        for (i, e) in ErrorCode.allCases.enumerated() where c.byCode[i] != 0 { byErrorCode[e.rawValue] = c.byCode[i] }
    }

    /// Back to positional counts; a status or code this build does not know makes the manifest unreadable.
    public func counts() throws(ManifestError) -> BatchCounts {
        var c = BatchCounts()
        c.records = records
        c.transactions = transactions
        c.blankLines = blankLines
        c.inputBytes = inputBytes
        c.jws = jws ?? 0
        c.jwsValid = jwsValid ?? 0
        for (k, n) in byStatus {
            guard let i = ReceiptStatus.allCases.firstIndex(where: { String($0.rawValue) == k }) else {
                throw ManifestError(.unknownStatus, value: k)
            }
            c.byStatus[i] += n
        }
        for (k, n) in byErrorCode {
            guard let i = ErrorCode.allCases.firstIndex(where: { $0.rawValue == k }) else {
                throw ManifestError(.unknownErrorCode, value: k)
            }
            c.byCode[i] += n
        }
        return c
    }

    enum CodingKeys: String, CodingKey {
        case records, transactions
        case blankLines = "blank_lines"
        case inputBytes = "input_bytes"
        case byStatus = "by_status"
        case byErrorCode = "by_error_code"
        case jws
        case jwsValid = "jws_valid"
    }
}

/// One committed part: its files and the input it covers.
public struct PartEntry: Codable, Sendable, Equatable {
    public var index: Int
    /// Paths relative to the output directory (`receipts/part-00000.parquet`, ...).
    public var files: [String]
    /// The part covers the input after `start` (exclusive) through `end` (inclusive).
    public var start: InputPosition
    public var end: InputPosition
    /// 0-based number of its first receipts row in the whole run, and its row counts.
    public var firstRecord: Int
    public var records: Int
    public var transactions: Int
    public var counts: StoredCounts
    /// The part's history spill folder, relative to the output directory (`.receiptflow-history/part-00000`);
    /// nil in a run without history.
    public var history: String? = nil

    public init(
        index: Int, files: [String], start: InputPosition, end: InputPosition, firstRecord: Int, records: Int,
        transactions: Int, counts: StoredCounts, history: String? = nil
    ) {
        self.history = history
        self.index = index
        self.files = files
        self.start = start
        self.end = end
        self.firstRecord = firstRecord
        self.records = records
        self.transactions = transactions
        self.counts = counts
    }

    enum CodingKeys: String, CodingKey {
        case index, files, start, end, records, transactions, counts, history
        case firstRecord = "first_record"
    }
}

/// `manifest.json` of a run written in parts: what the run is (its identity), which parts are committed and what
/// input each covers, and where a resumed run continues. Written whole when a run starts, completes or compacts
/// its log; each committed part in between is appended to `manifest.log` (`ManifestStore`).
public struct PartManifest: Codable, Sendable, Equatable {
    public static let fileName = "manifest.json"
    public static let currentVersion = 1

    public var manifestVersion = PartManifest.currentVersion
    public var identity: RunIdentity
    /// Receipts rows per part (parts end at the first batch boundary at or after this many rows).
    public var partRecords: Int
    public var parts: [PartEntry] = []
    public var resume = ResumePoint()
    /// True once the last part is committed: the folders hold every row.
    public var complete = false
    /// Runs that wrote into this output: the first, then one per `--resume`.
    public var attempts = 0
    /// Summed over attempts, up to each one's last commit (for summary.json).
    public var elapsedSeconds: Double = 0
    public var chainCacheHits = 0
    public var chainCacheMisses = 0
    /// What the history stage wrote when the run completed (nil without history).
    public var history: HistorySummary? = nil

    public init(identity: RunIdentity, partRecords: Int) {
        self.identity = identity
        self.partRecords = partRecords
    }

    /// Receipts rows in committed parts.
    public var records: Int { parts.reduce(0) { $0 + $1.records } }

    /// The counts of every committed part, added up.
    public func totalCounts() throws(ManifestError) -> BatchCounts {
        var total = BatchCounts()
        for p in parts { total.add(try p.counts.counts()) }
        return total
    }

    enum CodingKeys: String, CodingKey {
        case identity, parts, resume, complete, attempts, history
        case manifestVersion = "manifest_version"
        case partRecords = "part_records"
        case elapsedSeconds = "elapsed_seconds"
        case chainCacheHits = "chain_cache_hits"
        case chainCacheMisses = "chain_cache_misses"
    }

    // MARK: - Files

    /// Reads `directory/manifest.json` and the parts `manifest.log` adds to it; nil when there is no manifest.
    public static func load(from directory: String) throws(ManifestError) -> PartManifest? {
        let path = (directory as NSString).appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let manifest: PartManifest
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            manifest = try JSONDecoder().decode(PartManifest.self, from: data)
        } catch {
            throw ManifestError(.unreadable, path: path, value: "\(error)")
        }
        guard manifest.manifestVersion == currentVersion else {
            throw ManifestError(.unsupportedVersion, path: path, value: String(manifest.manifestVersion))
        }
        var m = manifest
        try ManifestStore.replay(directory, onto: &m)
        return m
    }

    /// The JSON text: keys sorted, indented, so that manifests diff cleanly.
    public func encoded() throws(ManifestError) -> [UInt8] {
        do {
            return try JSONDocumentEncoder.encode(self).rendered(
                layout: .indentedSpacedColon, sortingKeys: true, trailingNewline: true)
        } catch {
            throw ManifestError(.cannotRender, value: "\(error)")
        }
    }

    /// Replaces `directory/manifest.json` durably (temporary file, sync, rename, folder sync).
    public func write(to directory: String) throws(SinkError) {
        let bytes: [UInt8]
        do throws(ManifestError) {
            bytes = try encoded()
        } catch {
            throw SinkError(.cannotRender, path: Self.fileName, detail: error.message)
        }
        try replaceFileDurably(directory: directory, name: Self.fileName, bytes: bytes)
    }
}

/// The history tables of a run, for `summary.json`.
public struct HistorySummary: Codable, Sendable, Equatable {
    /// The as-of time of `state`, epoch milliseconds (nil when no receipt contributed).
    public var asOf: Int64?
    public var purchases: Int64
    public var subscriptions: Int64
    public var spilledBytes: Int64
    /// Subscriptions by `state` (states with none are absent).
    public var subscriptionsByState: [String: Int64]? = nil
    /// Rows of `events` and `daily`.
    public var events: Int64? = nil
    public var daily: Int64? = nil

    public init(
        asOf: Int64?, purchases: Int64, subscriptions: Int64, spilledBytes: Int64,
        subscriptionsByState: [String: Int64]? = nil, events: Int64? = nil, daily: Int64? = nil
    ) {
        self.asOf = asOf
        self.purchases = purchases
        self.subscriptions = subscriptions
        self.spilledBytes = spilledBytes
        self.subscriptionsByState = subscriptionsByState
        self.events = events
        self.daily = daily
    }

    enum CodingKeys: String, CodingKey {
        case purchases, subscriptions, events, daily
        case asOf = "as_of_ms"
        case spilledBytes = "spilled_bytes"
        case subscriptionsByState = "subscriptions_by_state"
    }
}

/// A manifest that cannot be read or used: a code to switch on, the manifest's path and the value at fault; the
/// message, which says what to do, is rendered from them here.
public struct ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The file is not JSON of a manifest (`value`: the decoder's words).
        case unreadable
        /// The manifest has a version this build does not read (`value`: that version).
        case unsupportedVersion
        /// The counts name a status this build does not know (`value`: the status).
        case unknownStatus
        /// The counts name an error code this build does not know (`value`: the code).
        case unknownErrorCode
        /// The manifest could not be turned into JSON (`value`: why).
        case cannotRender
    }

    public var code: Code
    public var path: String?
    public var value: String?

    public init(_ code: Code, path: String? = nil, value: String? = nil) {
        self.code = code
        self.path = path
        self.value = value
    }

    public var message: String {
        let file = path ?? PartManifest.fileName
        let v = value ?? "?"
        switch code {
        case .unreadable:
            return "cannot read \(file): \(v); it is not a receiptflow manifest (or was damaged): remove the "
                + "output directory and run again without --resume"
        case .unsupportedVersion:
            return "\(file) has manifest version \(v), this receiptflow reads version \(PartManifest.currentVersion); "
                + "resume with the receiptflow that began the run, or start over"
        case .unknownStatus: return "the manifest counts an unknown status \(v)"
        case .unknownErrorCode: return "the manifest counts an unknown error code \(v)"
        case .cannotRender: return "cannot render the manifest: \(v)"
        }
    }

    public var description: String { message }
}
