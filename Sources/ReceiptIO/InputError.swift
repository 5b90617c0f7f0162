/// An input that could not be read; the run cannot complete (exit status 1).
///
/// A code to switch on plus what it is about (the input, its compression, the system's or library's words); the
/// message, which names the input and says what to do, is rendered from them here and nowhere else.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The path does not exist or cannot be read (`reason`: the system's words).
        case cannotOpen
        /// The path is a directory.
        case isDirectory
        /// A read failed after the input was opened (`reason`: the system's words).
        case cannotRead
        /// The content is of a kind receiptflow does not read (`reason`: what it looks like, e.g. "bzip2 data").
        case unsupportedContent
        /// The content is UTF-16 or UTF-32 text (`reason`: the encoding as `iconv` names it, e.g. `UTF-16LE`).
        case wideText
        /// The decompressor could not be started (`reason`: why).
        case decoderUnavailable
        /// The compressed data ends early.
        case truncated
        /// The compressed data is invalid (`reason`: the library's words).
        case corrupt
        /// Bytes follow the compressed content that are not another member (gzip).
        case trailingData
        /// The content checksum does not match (zstd).
        case checksumMismatch
        /// The zstd window is larger than the reader keeps per input.
        case windowTooLarge
    }

    /// The compression the input was read through, for the codes about compressed data.
    public enum Compression: String, Sendable, Equatable {
        case gzip, zstd
    }

    public var code: Code
    /// The input as given on the command line (`-` or "standard input" for standard input).
    public var input: String
    public var compression: Compression?
    public var reason: String?

    public init(_ code: Code, input: String, compression: Compression? = nil, reason: String? = nil) {
        self.code = code
        self.input = input
        self.compression = compression
        self.reason = reason
    }

    /// The message for the user: what happened to which input, and what to do.
    public var message: String {
        let name = "'" + (input == "-" ? "standard input" : input) + "'"
        let why = reason.map { " (\($0))" } ?? ""
        let format = compression?.rawValue ?? "compressed"
        switch code {
        case .cannotOpen:
            return "cannot open input \(name): \(reason ?? "unknown error"); check the path and its permissions"
        case .isDirectory: return "input \(name) is a directory; give the files inside it instead"
        case .cannotRead: return "cannot read input \(name): \(reason ?? "unknown error")"
        case .unsupportedContent:
            return "input \(name) is \(reason ?? "of an unknown kind"), which receiptflow cannot read; "
                + "give NDJSON or base64 text, plain or compressed with gzip or zstd"
        case .wideText:
            let encoding = reason ?? "UTF-16"
            let form =
                switch encoding {
                case "UTF-16LE": "UTF-16 text (little-endian, without a byte-order mark)"
                case "UTF-16BE": "UTF-16 text (big-endian, without a byte-order mark)"
                default: "\(encoding) text (with a byte-order mark)"
                }
            let file = input == "-" ? "FILE" : name
            return "input \(name) is \(form), and receiptflow reads UTF-8 text only: convert it first "
                + "(`iconv -f \(encoding) -t UTF-8 \(file) > converted.ndjson`) and export the converted file"
        case .decoderUnavailable: return "cannot start \(format) decompression of \(name)\(why)"
        case .truncated:
            return compression == .zstd
                ? "input \(name) ends in the middle of a zstd frame; the file is truncated"
                : "input \(name) ends inside its \(format) data: the file is truncated"
        case .corrupt:
            return compression == .gzip
                ? "input \(name) is not valid gzip data\(why); check the file (gzip -t)"
                : "input \(name) is not a valid \(format) stream\(why); check that the file is complete"
        case .trailingData:
            return "input \(name) has data after its \(format) content that is not another \(format) member; "
                + "check the file (gzip -t)"
        case .checksumMismatch:
            return "input \(name) fails its \(format) content checksum\(why); the file is damaged, get a fresh copy"
        case .windowTooLarge:
            return "input \(name) was compressed with a zstd window larger than 128 MB\(why), more memory than "
                + "receiptflow keeps per input; recompress it without --long=28 or more, e.g. "
                + "`zstd -dc FILE | zstd -19 -o FILE2.zst`"
        }
    }

    public var description: String { message }
}
