import CommandArguments
import Foundation
import ReceiptModel

/// Prints a usage error as two short lines, the reason and where the options are listed; the exit status (2).
func usageError(_ command: String, _ reason: String) -> Int32 {
    printError("receiptflow \(command): \(reason)")
    printError("Run `receiptflow \(command) --help` for the options.")
    return 2
}

/// The command line from the raw argument bytes: an argument that is not UTF-8 (a file name) is kept exactly, as
/// the escaped text of `RawPath`, instead of having its bytes replaced.
func rawArguments() -> [String] {
    (0..<Int(CommandLine.argc)).map { i in
        guard let p = CommandLine.unsafeArgv[i] else { return "" }
        return RawPath.text(Array(UnsafeRawBufferPointer(start: p, count: strlen(p))))
    }
}

/// A path given on the command line that is not UTF-8, opened by its bytes and reached from then on through the
/// descriptor (`/proc/self/fd/N`), which every file call accepts; messages name it as given. Any other path is
/// returned as it is. `create` makes the folder (and its parents) first.
func pathByDescriptor(_ text: String, directory: Bool, create: Bool = false) -> String {
    guard RawPath.isRaw(text) else { return text }
    let bytes = RawPath.bytes(text)
    if directory && create {
        // mkdir -p on the bytes: every prefix that ends before a slash, then the whole path.
        for (k, b) in bytes.enumerated() where b == UInt8(ascii: "/") && k > 0 {
            RawPath.withFileSystemPath(RawPath.text(Array(bytes[..<k]))) { _ = mkdir($0, 0o755) }
        }
        _ = RawPath.withFileSystemPath(text) { mkdir($0, 0o755) }
    }
    let flags = directory ? O_RDONLY | O_DIRECTORY : O_RDONLY
    let fd = RawPath.withFileSystemPath(text) { open($0, flags) }
    guard fd >= 0 else { return text }
    let path = "/proc/self/fd/\(fd)"
    MessagePaths.show(path, as: text)
    return path
}
