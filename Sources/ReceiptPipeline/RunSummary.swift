import Foundation
import ReceiptModel
import ReceiptSink

/// `summary.json`: counts by status and error code, rows written, bytes and records read, time, rate and the
/// chain cache's hits and misses. Written durably (temporary name, sync, rename, folder sync).
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

    /// The JSON object, keys sorted so that runs diff cleanly.
    public func jsonObject() -> [String: Any] {
        let c = result.counts
        var byStatus: [String: Int] = [:]
        for (i, s) in ReceiptStatus.allCases.enumerated() { byStatus[String(s.rawValue)] = c.byStatus[i] }
        var byCode: [String: Int] = [:]
        for (i, e) in ErrorCode.allCases.enumerated() { byCode[e.rawValue] = c.byCode[i] }
        var object: [String: Any] = [
            "tool_version": toolVersion,
            "inputs": inputs,
            "format": format,
            "verify": verify,
            "threads": threads,
            "records": c.records,
            "receipts_written": c.records,
            "valid": c.count(of: .valid),
            "rejected": c.records - c.count(of: .valid),
            "transactions_written": c.transactions,
            "blank_lines": c.blankLines,
            "bytes_read": c.inputBytes,
            "by_status": byStatus,
            "by_error_code": byCode,
            "elapsed_seconds": (result.elapsedSeconds * 1000).rounded() / 1000,
            "receipts_per_second": receiptsPerSecond.rounded(),
            "chain_cache": ["hits": result.chainCacheHits, "misses": result.chainCacheMisses],
        ]
        if let history {
            var asOf: Any = NSNull()
            if let a = history.asOf {
                var text: [UInt8] = []
                CivilTime.appendISO8601(epochMillis: a, into: &text)
                asOf = String(decoding: text, as: UTF8.self)
            }
            object["as_of"] = asOf
            object["history"] = [
                "purchases": history.purchases, "subscriptions": history.subscriptions,
                "spilled_bytes": history.spilledBytes,
            ]
        }
        if let parts {
            object["parts"] = ["count": parts.count, "part_records": parts.partRecords, "attempts": parts.attempts]
        }
        return object
    }

    /// The bytes of `summary.json`.
    public func encoded() throws(SummaryError) -> [UInt8] {
        do {
            let data = try JSONSerialization.data(
                withJSONObject: jsonObject(), options: [.prettyPrinted, .sortedKeys])
            return [UInt8](data) + [0x0A]
        } catch {
            throw SummaryError("cannot render summary.json: \(error)")
        }
    }

    /// Replaces `summary.json` in `directory` durably (temporary name, sync, rename, folder sync).
    public func write(to directory: String) throws(SummaryError) {
        let bytes = try encoded()
        do throws(SinkError) {
            try replaceFileDurably(directory: directory, name: "summary.json", bytes: bytes)
        } catch {
            let path = directory.hasSuffix("/") ? directory + "summary.json" : directory + "/summary.json"
            throw SummaryError("cannot write \(path) (\(error.message)); check that --out is writable")
        }
    }
}

/// A failure writing the summary; the run cannot complete (exit status 1).
public struct SummaryError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ m: String) { message = m }
    public var description: String { message }
}
