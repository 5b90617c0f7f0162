import Foundation

/// `receiptflow export`: not yet wired.
func runExport(_ args: [String]) -> Int32 {
    printError("receiptflow export: not implemented yet")
    return 1
}
