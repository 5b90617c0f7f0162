import Foundation

/// A small argument scanner for the command-line tools: `--name value`, `--name=value`, flags, and positionals.
/// A valued option takes one value unless it is listed as repeatable: given twice, it is a usage error rather
/// than one value silently winning over the other.
public struct Arguments: Sendable {
    public private(set) var positionals: [String] = []
    private var options: [(String, String?)] = []

    /// - Parameters:
    ///   - flags: options that take no value.
    ///   - valued: options that take a value.
    ///   - repeatable: the valued options that may be given more than once (read with `values`).
    public init(
        _ args: [String], flags: Set<String>, valued: Set<String>, repeatable: Set<String> = []
    ) throws(UsageError) {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "-" || !a.hasPrefix("-") {
                positionals.append(a)
            } else if a == "--" {
                positionals.append(contentsOf: args[(i + 1)...])
                break
            } else {
                var name = a
                var value: String? = nil
                if let eq = a.firstIndex(of: "=") {
                    name = String(a[..<eq])
                    value = String(a[a.index(after: eq)...])
                }
                if flags.contains(name) {
                    if value != nil { throw UsageError(.unexpectedValue, option: name) }
                    options.append((name, nil))
                } else if valued.contains(name) {
                    if value == nil {
                        i += 1
                        guard i < args.count else { throw UsageError(.missingValue, option: name) }
                        value = args[i]
                    }
                    if !repeatable.contains(name), let earlier = self.value(name) {
                        throw UsageError(.repeatedOption, option: name, value: earlier, detail: value)
                    }
                    options.append((name, value))
                } else {
                    throw UsageError(.unknownOption, option: name)
                }
            }
            i += 1
        }
    }

    public func has(_ name: String) -> Bool { options.contains { $0.0 == name } }
    public func value(_ name: String) -> String? { options.last { $0.0 == name }?.1 }
    public func values(_ name: String) -> [String] { options.filter { $0.0 == name }.compactMap { $0.1 } }

    public func int(_ name: String) throws(UsageError) -> Int? {
        guard let v = value(name) else { return nil }
        guard let n = Int(v) else {
            throw UsageError(.invalidValue, option: name, value: v, expected: "a whole number")
        }
        return n
    }
}

/// Writes one line to standard error (paths reached through a descriptor named as they were given,
/// `MessagePaths`).
public func printError(_ s: String) {
    FileHandle.standardError.write(Data((MessagePaths.apply(s) + "\n").utf8))
}

/// Paths that messages name otherwise: a folder whose name is not UTF-8 is reached through its open descriptor
/// (`/proc/self/fd/N`), and messages name it as it was given (its escaped text).
public enum MessagePaths {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var shown: [(path: String, text: String)] = []

    /// Messages say `text` where they would say `path`.
    public static func show(_ path: String, as text: String) {
        lock.lock()
        shown.append((path, text))
        lock.unlock()
    }

    /// `s` with every registered path (not followed by a further digit) replaced by its text.
    public static func apply(_ s: String) -> String {
        lock.lock()
        let pairs = shown
        lock.unlock()
        var out = s
        for (path, text) in pairs {
            var result = ""
            var rest = out[...]
            while let r = rest.range(of: path) {
                let next = rest[r.upperBound...].first
                result += rest[..<r.lowerBound]
                result += next?.isNumber == true ? String(rest[r]) : text
                rest = rest[r.upperBound...]
            }
            out = result + rest
        }
        return out
    }
}
