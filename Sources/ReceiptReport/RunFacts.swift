import Foundation

/// What `summary.json` says about a run, as the report shows it.
public struct RunFacts: Sendable {
    public var toolVersion = ""
    public var inputs: [String] = []
    public var format = ""
    public var verify = true
    public var threads = 0
    public var records = 0
    public var valid = 0
    public var rejected = 0
    public var transactions = 0
    public var blankLines = 0
    public var bytesRead = 0
    /// Error codes with their counts, every code the summary lists (zeros included).
    public var byErrorCode: [(code: String, count: Int)] = []
    public var elapsedSeconds = 0.0
    public var receiptsPerSecond = 0.0
    public var chainCacheHits = 0
    public var chainCacheMisses = 0
    /// `as_of`, as written (RFC 3339); nil without history or when no receipt contributed.
    public var asOf: String? = nil
    /// Whether the run wrote the history tables.
    public var hasHistory = false
    public var purchases = 0
    public var subscriptions = 0
    /// The part count of a run written in parts.
    public var parts: Int? = nil

    public init() {}

    /// Reads the bytes of `summary.json`; nil when they are not a JSON object with a record count.
    public init?(summary bytes: [UInt8]) {
        guard let o = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
            let records = (o["records"] as? NSNumber)?.intValue
        else { return nil }
        func int(_ d: [String: Any]?, _ k: String) -> Int { (d?[k] as? NSNumber)?.intValue ?? 0 }
        self.records = records
        toolVersion = o["tool_version"] as? String ?? ""
        inputs = o["inputs"] as? [String] ?? []
        format = o["format"] as? String ?? ""
        verify = o["verify"] as? Bool ?? true
        threads = int(o, "threads")
        valid = int(o, "valid")
        rejected = int(o, "rejected")
        transactions = int(o, "transactions_written")
        blankLines = int(o, "blank_lines")
        bytesRead = int(o, "bytes_read")
        let codes = o["by_error_code"] as? [String: Any] ?? [:]
        byErrorCode = codes.keys.sorted().map { ($0, int(codes, $0)) }
        elapsedSeconds = (o["elapsed_seconds"] as? NSNumber)?.doubleValue ?? 0
        receiptsPerSecond = (o["receipts_per_second"] as? NSNumber)?.doubleValue ?? 0
        let cache = o["chain_cache"] as? [String: Any]
        chainCacheHits = int(cache, "hits")
        chainCacheMisses = int(cache, "misses")
        asOf = o["as_of"] as? String
        if let h = o["history"] as? [String: Any] {
            hasHistory = true
            purchases = int(h, "purchases")
            subscriptions = int(h, "subscriptions")
        }
        if let p = o["parts"] as? [String: Any] { parts = int(p, "count") }
    }
}
