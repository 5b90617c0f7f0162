import ReceiptSink

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure of the history stage (spill I/O, a full disk, a damaged spill, a history table that cannot be
/// written); the run cannot complete.
///
/// A code to switch on plus what it is about (the failed step, the path, the system's error); the message is
/// rendered from them here and nowhere else.
public struct HistoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The disk (or quota) holding the spill is full: `action` on `path` failed with ENOSPC or EDQUOT.
        case diskFull
        /// `action` on `path` was refused (EACCES, EPERM, EROFS).
        case permissionDenied
        /// `action` on `path` failed for another reason (`errno` when the system gave one, `reason`).
        case systemFailure
        /// The spill (`path`, when known) is damaged on disk (`detail`: how).
        case spillDamaged
        /// A history table could not be written (`sink`: the writer's error).
        case output
        /// A check of the stage's own invariants failed (`detail`: which); a bug, never bad input.
        case internalError
        /// `detail` is the whole message.
        case other
    }

    public var code: Code
    /// The failed step as the message says it ("cannot write the history spill").
    public var action: String?
    public var path: String?
    public var errno: Int32?
    /// The system's words.
    public var reason: String?
    public var detail: String?
    /// The table writer's error, for `.output`.
    public var sink: SinkError?

    public init(
        _ code: Code, action: String? = nil, path: String? = nil, errno: Int32? = nil, reason: String? = nil,
        detail: String? = nil
    ) {
        self.code = code
        self.action = action
        self.path = path
        self.errno = errno
        self.reason = reason
        self.detail = detail
    }

    /// A failure that has no more specific code: `message` is the whole message.
    public init(_ message: String) { self.init(.other, detail: message) }

    /// A history table's writer failed; a full disk stays `.diskFull`.
    public init(_ sink: SinkError) {
        self.init(sink.code == .diskFull ? .diskFull : .output, path: sink.path, errno: sink.errno)
        self.sink = sink
    }

    /// `action` on `path` just failed with the system's `errno`, with the code it deserves.
    static func system(_ action: String, _ path: String) -> HistoryError {
        let number = lastErrno()
        let code: Code
        switch number {
        case ENOSPC, EDQUOT: code = .diskFull
        case EACCES, EPERM, EROFS: code = .permissionDenied
        default: code = .systemFailure
        }
        return HistoryError(
            code, action: action, path: path, errno: number, reason: String(cString: strerror(number)))
    }

    /// Whether the failure is the disk (or quota) running out of space.
    public var isDiskFull: Bool { code == .diskFull }

    /// The message for the user: what failed on which file, and what to do.
    public var message: String {
        if let sink { return sink.message }
        let failed = "\(action ?? "cannot write") \(path ?? "the history spill"): \(reason ?? "unknown error")"
        switch code {
        case .diskFull:
            return "the disk holding the output is full: \(failed). The purchase history spills to disk inside "
                + "--out while it merges; free space there (docs/history.md estimates the need) or export with "
                + "--no-history"
        case .permissionDenied, .systemFailure: return failed
        case .spillDamaged:
            return "the history spill\(path.map { " " + $0 } ?? "") is damaged (\(detail ?? "unreadable"))"
        case .output: return "the history tables cannot be written"
        case .internalError: return "internal error: \(detail ?? "an invariant of the history stage does not hold")"
        case .other: return detail ?? "the purchase history failed"
        }
    }

    public var description: String { message }
}

/// The calling thread's `errno`, read where no member of `HistoryError` hides the global.
private func lastErrno() -> Int32 { errno }

extension SinkError {
    /// The history stage's failure as the writer stage reports it: a table writer's own error as it was, a full
    /// disk as `.diskFull`, anything else as `.history`; the message is the history stage's.
    public init(_ history: HistoryError) {
        if let sink = history.sink {
            self = sink
            return
        }
        self.init(
            history.code == .diskFull ? .diskFull : .history, path: history.path, errno: history.errno,
            reason: history.reason, detail: history.message)
    }
}
