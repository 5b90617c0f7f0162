import Foundation
import ReceiptTestSupport
import Testing

/// The help texts name what the tool does: every mode of `generate`, every table `export` writes, and the same
/// options of `export` as docs/contract.md.
@Suite struct HelpTextTests {
    static func help(_ args: [String]) throws -> String {
        let (status, out, err) = try runTool(args)
        #expect(status == 0, "\(err)")
        return String(decoding: out, as: UTF8.self)
    }

    @Test func theToolsHelpListsEveryModeOfGenerate() throws {
        let text = try Self.help(["--help"])
        for mode in ["generate --count", "generate --jws", "generate --customers"] {
            #expect(text.contains("receiptflow \(mode)"), "\(mode)")
        }
    }

    @Test func exportsHelpNamesEveryTableItWrites() throws {
        let text = try Self.help(["export", "--help"])
        for table in ["receipts", "transactions", "renewals", "purchases", "subscriptions", "summary.json"] {
            #expect(text.contains(table == "summary.json" ? table : "\(table).<ext>"), "\(table)")
        }
    }

    @Test func exportsHelpAndTheContractListTheSameOptions() throws {
        let help = try Self.help(["export", "--help"])
        let contract = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/contract.md"), encoding: .utf8)
        let start = try #require(contract.range(of: "### Options of `export`"))
        let end = try #require(contract.range(of: "### Options of `bench`"))
        var documented: Set<String> = []
        for line in contract[start.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| `--") {
            let cell = line.split(separator: "|")[0]
            for m in cell.matches(of: /`(--[a-z-]+)/) { documented.insert(String(m.1)) }
        }
        let helped = Set(help.matches(of: /(--[a-z][a-z-]*)/).map { String($0.1) })
        #expect(documented.count > 20)
        #expect(documented.subtracting(helped).isEmpty, "in the contract only: \(documented.subtracting(helped))")
        #expect(helped.subtracting(documented).isEmpty, "in the help only: \(helped.subtracting(documented))")
    }
}
