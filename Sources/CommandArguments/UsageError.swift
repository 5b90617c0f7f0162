/// A usage error: the one-line reason is printed with where to find the command's options, and the process
/// exits with status 2.
///
/// A code to switch on plus the option and value at fault; the reason is rendered from them here.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// `option` is not one the command takes.
        case unknownOption
        /// `option` takes a value and none was given.
        case missingValue
        /// `option` is a flag and was given a value.
        case unexpectedValue
        /// `value` of `option` is not one of `expected` (a phrase: "1 to 1024", "parquet, csv or ndjson").
        case invalidValue
        /// `option` was given an empty value; it needs `expected` ("a non-empty key name").
        case emptyValue
        /// `option` is required (`expected`: what it is for, when there is more to say).
        case missingOption
        /// `option` cannot be used with what else was given (`detail`: the sentence that says why and what to do).
        case invalidCombination
        /// `option` takes one value and was given twice: `value` first, then `detail`.
        case repeatedOption
        /// `detail` is the whole reason (positional arguments and commands with their own checks).
        case other
    }

    public var code: Code
    public var option: String?
    public var value: String?
    public var expected: String?
    public var detail: String?

    public init(
        _ code: Code, option: String? = nil, value: String? = nil, expected: String? = nil, detail: String? = nil
    ) {
        self.code = code
        self.option = option
        self.value = value
        self.expected = expected
        self.detail = detail
    }

    /// A reason that has no more specific code.
    public init(message: String) { self.init(.other, detail: message) }

    /// The one-line reason.
    public var message: String {
        let name = option ?? "the option"
        switch code {
        case .unknownOption: return "unknown option \(name)"
        case .missingValue: return "\(name) needs a value"
        case .unexpectedValue: return "\(name) takes no value"
        case .invalidValue:
            // Numbers read plainly; other text is quoted so that empty or odd values are visible.
            let got = value.map { Int($0) != nil ? $0 : "'\($0)'" } ?? "nothing"
            return "\(name) takes \(expected ?? "another value"), got \(got)"
        case .emptyValue: return "\(name) needs \(expected ?? "a non-empty value")"
        case .missingOption: return "\(name) is required" + (expected.map { ": \($0)" } ?? "")
        case .repeatedOption:
            return
                "\(name) was given twice ('\(value ?? "")', then '\(detail ?? "")'); it takes one value, give it once"
        case .invalidCombination, .other: return detail ?? "\(name) cannot be used here"
        }
    }

    public var description: String { message }
}
