import CommandArguments
import Foundation

/// Prints a usage error as two short lines, the reason and where the options are listed; the exit status (2).
func usageError(_ command: String, _ reason: String) -> Int32 {
    printError("receiptflow \(command): \(reason)")
    printError("Run `receiptflow \(command) --help` for the options.")
    return 2
}
