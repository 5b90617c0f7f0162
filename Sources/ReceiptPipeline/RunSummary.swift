import Foundation
import ReceiptModel
import ReceiptSink

/// `summary.json`: counts by status and error code, rows written, bytes and records read, time, rate and the
/// chain cache's hits and misses. Written atomically (temporary name, then rename).
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

    /// Writes `summary.json` into `directory` under a temporary name, then renames it into place.
    public func write(to directory: String) throws(SummaryError) {
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: jsonObject(), options: [.prettyPrinted, .sortedKeys])
        } catch {
            throw SummaryError("cannot render summary.json: \(error)")
        }
        let dir = URL(fileURLWithPath: directory)
        let final = dir.appendingPathComponent("summary.json")
        let temp = dir.appendingPathComponent(".summary.json.tmp-\(getpid())")
        do {
            try (data + Data("\n".utf8)).write(to: temp)
            if rename(temp.path, final.path) != 0 {
                let why = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: temp)
                throw SummaryError("cannot rename \(temp.path) to \(final.path): \(why)")
            }
        } catch let e as SummaryError {
            throw e
        } catch {
            throw SummaryError(
                "cannot write \(final.path): \(error.localizedDescription); check that --out is writable")
        }
    }
}

/// A failure writing the summary; the run cannot complete (exit status 1).
public struct SummaryError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ m: String) { message = m }
    public var description: String { message }
}
