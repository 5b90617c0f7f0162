/// Why a run's history state cannot be used as the base of another run. A code plus the state file's path and
/// what was found; the message is rendered here.
public struct HistoryStateError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The state file is missing (`detail`: why that happens).
        case missing
        /// The file cannot be opened or read (`detail`: the system's words).
        case unreadable
        /// The file is not a receiptflow history state (its first bytes are not the format's).
        case notState
        /// The state was written in a format version or record layout this build does not read (`detail`: what
        /// was found).
        case foreignVersion
        /// The checksum stored at the end of the file does not match its bytes.
        case checksumMismatch
        /// The bytes pass the checksum but do not decode (`detail`: where); a damaged or hand-made file.
        case damaged
    }

    public var code: Code
    public var path: String
    public var detail: String?

    public init(_ code: Code, path: String, detail: String? = nil) {
        self.code = code
        self.path = path
        self.detail = detail
    }

    public var message: String {
        switch code {
        case .missing: return "\(path) is missing\(detail.map { ": " + $0 } ?? "")"
        case .unreadable: return "cannot read \(path): \(detail ?? "unknown error")"
        case .notState: return "\(path) is not a receiptflow history state"
        case .foreignVersion:
            return "\(path) was written by a version of receiptflow whose history state this version cannot read "
                + "(\(detail ?? "another format")); export the chain's inputs again in one run to start a new chain"
        case .checksumMismatch:
            return "\(path) fails its checksum: the file was changed or damaged after its run wrote it; restore it "
                + "from a copy, or export the chain's inputs again in one run"
        case .damaged: return "\(path) is damaged (\(detail ?? "it does not decode"))"
        }
    }

    public var description: String { message }
}
