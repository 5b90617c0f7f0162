import Foundation
import Testing

/// `export - --stdin-name NAME`: standard input named as the file it was piped from, in every table and in the
/// history state, so that a run fed through a pipe equals a run given the path.
@Suite struct StdinNameTests {
    @Test func standardInputNamedAsAFileWritesTheTablesOfARunOnThatFile() throws {
        let dir = try BuiltInRootsTests.temporaryDirectory("stdin-name")
        defer { try? FileManager.default.removeItem(at: dir) }
        let corpus = dir.appendingPathComponent("corpus.ndjson").path
        let ca = dir.appendingPathComponent("ca").path
        let (g, _, ge) = try runTool(
            ["generate", "--customers", "8", "--seed", "5", "--ca-dir", ca, "--out", corpus, "--quiet"])
        #expect(g == 0, "\(ge)")
        let anchor = ca + "/root.pem"
        let byPath = dir.appendingPathComponent("by-path").path
        let piped = dir.appendingPathComponent("piped").path
        let common = ["--format", "csv", "--trust-anchor", anchor, "--quiet", "--as-of", "2021-01-01"]
        let (a, _, ae) = try runTool(["export", corpus, "--out", byPath] + common)
        #expect(a == 0, "\(ae)")
        let data = try Data(contentsOf: URL(fileURLWithPath: corpus))
        let (b, _, be) = try runTool(["export", "-", "--stdin-name", corpus, "--out", piped] + common, stdin: data)
        #expect(b == 0, "\(be)")
        for table in ["receipts", "transactions", "purchases", "subscriptions"] {
            let want = try Data(contentsOf: URL(fileURLWithPath: "\(byPath)/\(table).csv"))
            let got = try Data(contentsOf: URL(fileURLWithPath: "\(piped)/\(table).csv"))
            #expect(got == want, "\(table)")
        }
        let purchases = try String(contentsOfFile: "\(piped)/purchases.csv", encoding: .utf8)
        #expect(purchases.contains(corpus))
        // The state names the input too: a merge of the piped run writes the same purchases.
        let merged = dir.appendingPathComponent("merged").path
        let (m, _, me) = try runTool(["merge", piped, "--out", merged, "--format", "csv", "--as-of", "2021-01-01"])
        #expect(m == 0, "\(me)")
        let remerged = try Data(contentsOf: URL(fileURLWithPath: "\(merged)/purchases.csv"))
        #expect(remerged == Data(purchases.utf8))
    }

    @Test func aStdinNameWithoutStandardInputIsAUsageError() throws {
        let (status, _, err) = try runTool(["export", "in.ndjson", "--stdin-name", "x", "--out", "unused"])
        #expect(status == 2)
        #expect(err.contains("--stdin-name"))
    }
}
