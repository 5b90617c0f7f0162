import Foundation

/// A small argument scanner for the command-line tools: `--name value`, `--name=value`, flags, and positionals.
/// A valued option takes one value unless it is listed as repeatable: given twice, it is a usage error rather
/// than one value silently winning over the other.
public struct Arguments {
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

/// Writes one line to standard error.
public func printError(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}
