import CommandArguments
import Foundation
import ReceiptModel

// The executable only parses arguments and wires stages; behaviour lives in the library modules.

let usage = """
    receiptflow \(ReceiptflowVersion.string): validate App Store receipts in bulk and export them as tables.

    usage:
      receiptflow export [INPUT ...] --out DIR [--format parquet|csv|ndjson] [--trust-anchor PATH ...] [options]
      receiptflow inspect [FILE | -] [--trust-anchor PATH ...] [--no-verify] [--json]
      receiptflow generate --count N --out FILE [--seed S] [--digest sha1|sha256] [--bad-fraction F] [--ca-dir DIR]
      receiptflow generate --jws --count N --out FILE [--seed S] [--bad-fraction F] [--ca-dir DIR]
      receiptflow generate --customers N --out FILE [--years Y] [--jws-fraction F] [--as-of DATE] [--ca-dir DIR]
      receiptflow report DIR                       write DIR/report.html, a one-page report of the run in DIR
      receiptflow merge RUN ... --out DIR [--format F] [--as-of DATE]   merge runs' histories as one chain
      receiptflow bench CORPUS [--threads N] [--format parquet|csv|ndjson] [--min-ratio R] [--json FILE]

    Run `receiptflow COMMAND --help` for a command's options.
    """

// From the raw bytes: a file name that is not UTF-8 stays exactly what it is (`RawPath`).
var arguments = Array(rawArguments().dropFirst())
guard let command = arguments.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}
arguments.removeFirst()
// `export` and `inspect` use such paths as given; the other commands write files by name and take UTF-8 only,
// rather than a file under another name.
if !["export", "inspect"].contains(command), let raw = arguments.first(where: RawPath.isRaw) {
    exit(usageError(command, "'\(raw)' is not UTF-8; this command takes UTF-8 paths only"))
}
let status: Int32
switch command {
case "export": status = runExport(arguments)
case "inspect": status = runInspect(arguments)
case "generate": status = runGenerate(arguments)
case "bench": status = runBench(arguments)
case "report": status = runReport(arguments)
case "merge": status = runMerge(arguments)
case "--version", "version":
    print(ReceiptflowVersion.string)
    status = 0
case "-h", "--help", "help":
    print(usage)
    status = 0
default:
    printError("receiptflow: unknown command '\(command)'")
    printError("Run `receiptflow --help` for the commands.")
    status = 2
}
exit(status)
