#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An output that could not be written; the run cannot complete (exit status 1).
///
/// A code to switch on plus what it is about (the step that failed, the path, the system's error, the value at
/// fault); the message, which names the file and says what to do, is rendered from them here and nowhere else.
public struct SinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The disk (or the user's quota) holding the output is full: `operation` on `path` failed with ENOSPC or
        /// EDQUOT. `detail`, when set, is the whole message of the stage that found it (the history spill).
        case diskFull
        /// `operation` on `path` was refused (EACCES, EPERM, EROFS).
        case permissionDenied
        /// `operation` on `path` failed for another reason (`errno`, `reason`).
        case systemFailure
        /// `path`, given as the output directory, exists and is not a directory.
        case notADirectory
        /// Another process holds the output folder's lock (`path`: the folder; `value`: that process's id, when
        /// known).
        case folderClaimed
        /// Parquet was asked for on standard output, which cannot be seeked.
        case parquetToStandardOutput
        /// No zstd compression context could be created.
        case compressorUnavailable
        /// zstd rejects the compression level `value` (`reason`: its words).
        case compressionLevelRejected
        /// zstd failed to compress a page (`reason`: its words).
        case compressionFailed
        /// A run in parts reached its largest number of parts (`value`).
        case tooManyParts
        /// `path` is listed as committed in the manifest of the output folder `value` but is gone.
        case resumeMismatch
        /// The manifest names an output format this build does not write (`value`).
        case unknownFormat
        /// A file's content could not be produced (`detail`: the whole message, e.g. the manifest's).
        case cannotRender
        /// The purchase-history stage failed (`detail`: its message).
        case history
        /// `path` in the output folder, which the run was about to write over or remove, is its input `value`.
        case inputInTheWay
        /// A check of the writer's own invariants failed (`detail`: which); a bug, never bad input.
        case internalError
    }

    /// The step of the system call that failed, for the codes that carry an `errno`.
    public enum Operation: Sendable, Equatable {
        case create, write, sync, close, remove
        /// Renaming `path` (the temporary file) to `to`.
        case rename(to: String)
        case openFolder, syncFolder, removeFolder
        case createOutputFolder, openOutputFolder

        /// "cannot write", as the message says it before the path.
        var phrase: String {
            switch self {
            case .create: return "cannot create"
            case .write: return "cannot write"
            case .sync: return "cannot sync"
            case .close: return "cannot close"
            case .remove: return "cannot remove"
            case .rename(let to): return "cannot rename to \(to):"
            case .openFolder: return "cannot open the folder"
            case .syncFolder: return "cannot sync the folder"
            case .removeFolder: return "cannot remove the folder"
            case .createOutputFolder: return "cannot create the output directory"
            case .openOutputFolder: return "cannot open the output directory"
            }
        }
    }

    public var code: Code
    /// The step that failed, for the codes about a system call.
    public var operation: Operation?
    /// The file or folder concerned (`standard output` for a stream).
    public var path: String?
    /// The system's error number, for the codes about a system call.
    public var errno: Int32?
    /// The system's or library's words.
    public var reason: String?
    /// The value at fault (a level, a count, a format, a process id), as the code says.
    public var value: String?
    /// A sentence the code's message is built around, or the whole message of the stage that failed.
    public var detail: String?

    public init(
        _ code: Code, operation: Operation? = nil, path: String? = nil, errno: Int32? = nil, reason: String? = nil,
        value: String? = nil, detail: String? = nil
    ) {
        self.code = code
        self.operation = operation
        self.path = path
        self.errno = errno
        self.reason = reason
        self.value = value
        self.detail = detail
    }

    /// The failure of `operation` on `path` just reported by the system in `errno`, with the code it deserves:
    /// a full disk and a refusal are told apart from other failures.
    public static func system(_ operation: Operation, _ path: String, errno: Int32? = nil) -> SinkError {
        let number = errno ?? lastErrno()
        let code: Code
        switch number {
        case ENOSPC, EDQUOT: code = .diskFull
        case EACCES, EPERM, EROFS: code = .permissionDenied
        default: code = .systemFailure
        }
        return SinkError(
            code, operation: operation, path: path, errno: number, reason: String(cString: strerror(number)))
    }

    /// Whether the failure is the disk (or quota) running out of space.
    public var isDiskFull: Bool { code == .diskFull }

    /// The message for the user: what failed on which file, and what to do.
    public var message: String {
        let file = path ?? "the output"
        let v = value ?? "?"
        let failed = "\(operation?.phrase ?? "cannot write") \(file): \(reason ?? "unknown error")"
        switch code {
        case .diskFull:
            if let detail { return detail }
            return "the disk holding the output is full: \(failed); free space there or give another --out"
        case .permissionDenied, .systemFailure: return failed
        case .notADirectory: return "cannot use \(file) as the output directory: it exists and is not a directory"
        case .folderClaimed:
            let holder = value.map { "process \($0)" } ?? "another process"
            return "another receiptflow is writing \(file) (\(holder) holds its lock); wait for it to end or "
                + "stop it, or give another --out"
        case .parquetToStandardOutput:
            return "Parquet cannot be written to standard output; give a directory to --out, or use --format csv or "
                + "ndjson"
        case .compressorUnavailable: return "cannot create a zstd compression context (out of memory?)"
        case .compressionLevelRejected: return "zstd rejects compression level \(v): \(reason ?? "unknown error")"
        case .compressionFailed: return "zstd compression failed: \(reason ?? "unknown error")"
        case .tooManyParts:
            return "a run in parts has at most \(v) parts; start over with a larger --part-records"
        case .resumeMismatch:
            return "\(file) is listed in manifest.json but missing; the output was changed after the run: remove "
                + "\(v) and export again"
        case .unknownFormat: return "the manifest names an unknown format '\(v)'"
        case .cannotRender: return detail ?? "cannot render \(file)"
        case .history: return detail ?? "the purchase history could not be written"
        case .inputInTheWay:
            return "\(file) is the input \(v), which this run must not write over or remove: move the input out of "
                + "the output directory or give another --out"
        case .internalError: return "internal error: \(detail ?? "an invariant of the writer does not hold")"
        }
    }

    public var description: String { message }
}

/// The calling thread's `errno`, read where no member of `SinkError` hides the global.
private func lastErrno() -> Int32 { errno }
