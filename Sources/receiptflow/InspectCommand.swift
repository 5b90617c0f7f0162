import Foundation

/// `receiptflow inspect`: not yet wired.
func runInspect(_ args: [String]) -> Int32 {
    printError("receiptflow inspect: not implemented yet")
    return 1
}
