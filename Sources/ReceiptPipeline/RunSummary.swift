import ReceiptModel
import ReceiptSink

/// `summary.json`: counts by status and error code, receipts and JWS apart, rows written, bytes and records read,
/// time, rate, the chain cache's hits and misses, and the history's purchases and subscriptions by state. Written durably (temporary name, sync, rename, folder sync).
public struct RunSummary: Sendable {
    public var result: RunResult
    public var inputs: [String]
    public var format: String
    public var verify: Bool
    public var threads: Int
    public var toolVersion = ReceiptflowVersion.string
    /// A run written in parts: its part count, part size and attempts (1 + the number of resumes).
    public var parts: (count: Int, partRecords: Int, attempts: Int)? = nil
    /// The history tables, when written: `as_of` and their row and spill counts.
    public var history: HistorySummary? = nil
    /// The run this one continued (`--base`).
    public var base: BaseSummary? = nil
    /// The runs `receiptflow merge` merged, in order.
    public var merged: [BaseSummary]? = nil
    /// Whether a run this one continued or merged built its history from records nobody verified.
    public var earlierRunsUnverified = false

    public init(result: RunResult, inputs: [String], format: String, verify: Bool, threads: Int) {
        self.result = result
        self.inputs = inputs
        self.format = format
        self.verify = verify
        self.threads = threads
    }

    /// Records per second over the whole run.
    public var receiptsPerSecond: Double {
        result.elapsedSeconds > 0 ? Double(result.counts.records) / result.elapsedSeconds : 0
    }

    /// The JSON object (written with its keys sorted, so that runs diff cleanly).
    public func jsonValue() -> JSONDocument {
        let c = result.counts
        var byStatus = JSONObject()
        for (i, s) in ReceiptStatus.allCases.enumerated() { byStatus[String(s.rawValue)] = .int(c.byStatus[i]) }
        var byCode = JSONObject()
        for (i, e) in ErrorCode.allCases.enumerated() { byCode[e.rawValue] = .int(c.byCode[i]) }
        var object = JSONObject([
            "tool_version": .string(toolVersion),
            "inputs": .strings(inputs),
            "format": .string(format),
            "verify": .bool(verify),
            "threads": .int(threads),
            "records": .int(c.records),
            "receipts_written": .int(c.records),
            "valid": .int(c.count(of: .valid)),
            "rejected": .int(c.records - c.count(of: .valid)),
            "transactions_written": .int(c.transactions),
            "blank_lines": .int(c.blankLines),
            "bytes_read": .int(c.inputBytes),
            "by_status": .object(byStatus),
            "by_error_code": .object(byCode),
            "elapsed_seconds": .double((result.elapsedSeconds * 1000).rounded() / 1000),
            "receipts_per_second": .double(receiptsPerSecond.rounded()),
            "chain_cache": ["hits": .int(result.chainCacheHits), "misses": .int(result.chainCacheMisses)],
            "by_record_kind": [
                "receipt": [
                    "records": .int(c.receipts), "valid": .int(c.receiptsValid),
                    "rejected": .int(c.receipts - c.receiptsValid),
                ],
                "jws": ["records": .int(c.jws), "valid": .int(c.jwsValid), "rejected": .int(c.jws - c.jwsValid)],
            ],
        ])
        if let history {
            var asOf = JSONDocument.null
            if let a = history.asOf {
                var text: [UInt8] = []
                CivilTime.appendISO8601(epochMillis: a, into: &text)
                asOf = .string(String(decoding: text, as: UTF8.self))
            }
            object["as_of"] = asOf
            var byState = JSONObject()
            for (state, n) in ClosingLine.byState(history) { byState[state] = .integer(n) }
            object["history"] = [
                "purchases": .integer(history.purchases), "subscriptions": .integer(history.subscriptions),
                "events": .integer(history.events ?? 0), "daily": .integer(history.daily ?? 0),
                "spilled_bytes": .integer(history.spilledBytes), "subscriptions_by_state": .object(byState),
            ]
            object["history_from_unverified_records"] = .bool(historyFromUnverifiedRecords)
        }
        if let base { object["base"] = base.jsonValue() }
        if let merged { object["merged"] = .array(merged.map { $0.jsonValue() }) }
        if let parts {
            object["parts"] = [
                "count": .int(parts.count), "part_records": .int(parts.partRecords), "attempts": .int(parts.attempts),
            ]
        }
        return .object(object)
    }

    /// Whether the history tables hold records nobody verified: this run's (`--no-verify`) or an earlier run's of
    /// the chain or the merge.
    public var historyFromUnverifiedRecords: Bool { !verify || earlierRunsUnverified }

    /// The line said after the closing line when the history tables were built from records nobody verified
    /// (`--no-verify` in this run or an earlier one); nil otherwise.
    public var unverifiedHistoryNote: String? {
        guard history != nil, historyFromUnverifiedRecords else { return nil }
        return "purchases and subscriptions were built from unverified records (--no-verify): "
            + "anyone could have made them"
    }

    /// The bytes of `summary.json`: keys sorted, indented, a newline at the end.
    public func encoded() -> [UInt8] {
        jsonValue().rendered(layout: .indentedSpacedColon, sortingKeys: true, trailingNewline: true)
    }

    /// Replaces `summary.json` in `directory` durably (temporary name, sync, rename, folder sync).
    public func write(to directory: String) throws(SummaryError) {
        let bytes = encoded()
        do throws(SinkError) {
            try replaceFileDurably(directory: directory, name: "summary.json", bytes: bytes)
        } catch {
            let path = directory.hasSuffix("/") ? directory + "summary.json" : directory + "/summary.json"
            throw SummaryError(.cannotWrite, path: path, reason: error.message)
        }
    }
}

/// A failure writing the summary; the run cannot complete (exit status 1). A code, the file and the reason; the
/// message is rendered from them.
public struct SummaryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The file could not be written (`reason`: the writer's words).
        case cannotWrite
    }

    public var code: Code
    public var path: String
    public var reason: String

    public init(_ code: Code, path: String, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    public var message: String {
        switch code {
        case .cannotWrite: return "cannot write \(path) (\(reason)); check that --out is writable"
        }
    }

    public var description: String { message }
}
