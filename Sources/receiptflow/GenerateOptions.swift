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

    /// `--ca-dir DIR`: where the test CAs' files are kept (default ~/.cache/receiptflow/test-ca).
    var testCADirectory: URL {
        value("--ca-dir").map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/receiptflow/test-ca")
    }
}
