import CommandArguments
import Foundation

/// The options every `generate` mode reads the same way.
extension Arguments {
    /// `--seed S`, a whole number (default 1).
    func generatorSeed() throws(UsageError) -> UInt64 {
        guard let s = value("--seed") else { return 1 }
        guard let v = UInt64(s) else {
            throw UsageError(.invalidValue, option: "--seed", value: s, expected: "a whole number")
        }
        return v
    }

    /// A share from 0 to 1 given as `option`; nil when the option is absent.
    func fraction(_ option: String) throws(UsageError) -> Double? {
        guard let f = value(option) else { return nil }
        guard let v = Double(f), v >= 0, v <= 1 else {
            throw UsageError(.invalidValue, option: option, value: f, expected: "a number from 0 to 1")
        }
        return v
    }

    /// `--ca-dir DIR`: where the test CAs' files are kept (default ~/.cache/receiptflow/test-ca, where `~` is
    /// `$HOME` as the shell expands it, or the account's home folder when `$HOME` is unset or empty).
    var testCADirectory: URL {
        value("--ca-dir").map { URL(fileURLWithPath: $0) }
            ?? homeDirectory().appendingPathComponent(".cache/receiptflow/test-ca")
    }
}

/// `$HOME` when set and not empty (what `~` means in the shell, and so in the docs), else the account's home.
func homeDirectory() -> URL {
    if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty {
        return URL(fileURLWithPath: home, isDirectory: true)
    }
    return FileManager.default.homeDirectoryForCurrentUser
}
