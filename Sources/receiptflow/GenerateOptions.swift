import CommandArguments
import Foundation
import ReceiptSynth

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

    /// The file path given as `option` (`--out FILE`, `--truth FILE`); nil when absent. A path that names a folder
    /// is refused before any work (exit status 1, as for any output that cannot be written): the file is written
    /// under a temporary name beside it and renamed at the end, which would fail only then.
    func generatorFile(_ option: String) throws -> String? {
        guard let path = value(option) else { return nil }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            let example = (path.hasSuffix("/") ? path : path + "/") + "receipts.ndjson"
            throw SynthError(
                "cannot write \(option) '\(path)': it is a folder; give the path of the file to write, such as "
                    + example)
        }
        return path
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
