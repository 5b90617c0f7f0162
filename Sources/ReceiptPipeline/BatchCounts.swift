import ReceiptModel

/// What one batch (or the whole run) held: records by status and by error code, for the summary and progress.
public struct BatchCounts: Sendable, Equatable {
    public var records = 0
    public var transactions = 0
    public var blankLines = 0
    public var inputBytes = 0
    /// Of `records`, the rows of JWS (the rest are receipts), and how many of those are valid.
    public var jws = 0
    public var jwsValid = 0
    /// Indexed like `ReceiptStatus.allCases`.
    public var byStatus = [Int](repeating: 0, count: ReceiptStatus.allCases.count)
    /// Indexed like `ErrorCode.allCases`.
    public var byCode = [Int](repeating: 0, count: ErrorCode.allCases.count)

    public init() {}

    mutating func count(_ status: ReceiptStatus, _ code: ErrorCode?, jws isJWS: Bool = false) {
        records += 1
        if isJWS {
            jws += 1
            if status == .valid { jwsValid += 1 }
        }
        // At most 5 and 17 comparisons; only the status lookup runs for valid receipts.
        if let s = ReceiptStatus.allCases.firstIndex(of: status) { byStatus[s] += 1 }
        if let code, let c = ErrorCode.allCases.firstIndex(of: code) { byCode[c] += 1 }
    }

    public mutating func add(_ o: BatchCounts) {
        records += o.records
        transactions += o.transactions
        blankLines += o.blankLines
        inputBytes += o.inputBytes
        jws += o.jws
        jwsValid += o.jwsValid
        for i in byStatus.indices { byStatus[i] += o.byStatus[i] }
        for i in byCode.indices { byCode[i] += o.byCode[i] }
    }

    public func count(of status: ReceiptStatus) -> Int {
        ReceiptStatus.allCases.firstIndex(of: status).map { byStatus[$0] } ?? 0
    }

    /// Receipt rows (records that are not JWS).
    public var receipts: Int { records - jws }
    /// Valid receipt rows.
    public var receiptsValid: Int { count(of: .valid) - jwsValid }

    public func count(of code: ErrorCode) -> Int { ErrorCode.allCases.firstIndex(of: code).map { byCode[$0] } ?? 0 }

    mutating func reset() { self = BatchCounts() }
}
