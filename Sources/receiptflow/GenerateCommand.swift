import Foundation

/// `receiptflow generate`: not yet wired.
func runGenerate(_ args: [String]) -> Int32 {
    printError("receiptflow generate: not implemented yet")
    return 1
}
