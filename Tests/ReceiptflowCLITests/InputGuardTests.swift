import Foundation
import ReceiptTestSupport
import Testing

/// No run writes over, renames or removes one of its own inputs, whatever name or link leads to it, and
/// `--overwrite` removes only the files an earlier run's summary or manifest lists.
@Suite(.serialized)
struct InputGuardTests {
    /// A folder holding `in.ndjson` (real receipts) and an empty `out/`.
    private func workspace(_ tag: String) throws -> (dir: URL, input: URL, out: URL) {
        let dir = try FailSafe.temporaryDirectory("guard-\(tag)")
        let input = dir.appendingPathComponent("in.ndjson")
        try FailSafe.text(try FailSafe.lines()).write(to: input)
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        return (dir, input, out)
    }

    /// How an input comes to be at `path` inside the output folder.
    enum Placement: String, CaseIterable {
        case copy, hardLink, symbolicLink
    }

    private func place(_ input: URL, at path: URL, _ how: Placement) throws -> URL {
        try FileManager.default.createDirectory(
            at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        switch how {
        case .copy:
            try FileManager.default.copyItem(at: input, to: path)
            return path
        case .hardLink:
            try FileManager.default.linkItem(at: input, to: path)
            return input
        case .symbolicLink:
            try FileManager.default.createSymbolicLink(at: path, withDestinationURL: input)
            return input
        }
    }

    /// Every name a run may write over or remove, with the options of a run that would: tables of the run's
    /// format and of others, run files, temporary files, parts and the history spill.
    private static let names: [(String, [String])] = [
        ("receipts.csv", ["--format", "csv"]),
        ("transactions.parquet", ["--format", "parquet"]),
        ("receipts.parquet", ["--format", "csv"]),
        ("summary.json", ["--format", "ndjson"]),
        ("manifest.json", ["--format", "csv", "--part-records", "5"]),
        ("purchases.ndjson", ["--format", "ndjson"]),
        (".receipts.csv.4242.tmp", ["--format", "csv"]),
        ("receipts/part-00000.csv", ["--format", "csv", "--part-records", "5"]),
        ("transactions/part-00003.ndjson", ["--format", "csv", "--part-records", "5"]),
        (".receiptflow-history/part-00000/spill", ["--format", "csv", "--part-records", "5"]),
        (".receiptflow-history-77/runs", ["--format", "csv"]),
    ]

    @Test(arguments: Placement.allCases)
    func aRunThatWouldTouchAnInputIsRefusedNamingItAndWritesNothing(_ how: Placement) throws {
        for (name, options) in Self.names {
            for overwrite in [false, true] {
                let (dir, input, out) = try workspace("touch")
                defer { try? FileManager.default.removeItem(at: dir) }
                let given = try place(input, at: out.appendingPathComponent(name), how)
                let before = FailSafe.snapshot(dir)
                let extra = options + (overwrite ? ["--overwrite"] : [])
                let (status, _, err) = try runTool(
                    ["export", given.path, "--out", out.path, "--trust-anchor", FailSafe.apple, "--quiet"] + extra)
                let label = "\(name) (\(how), \(extra))"
                #expect(status == 2, "\(label): \(err)")
                #expect(
                    err.contains("the input \(given.path)") && err.contains("nothing was written"), "\(label): \(err)")
                #expect(FailSafe.snapshot(dir) == before, "\(label)")
            }
        }
    }

    @Test func aTrustAnchorIsAnInputToo() throws {
        let (dir, input, out) = try workspace("anchor")
        defer { try? FileManager.default.removeItem(at: dir) }
        let anchor = out.appendingPathComponent("summary.json")
        try FileManager.default.copyItem(atPath: FailSafe.apple, toPath: anchor.path)
        let before = FailSafe.snapshot(dir)
        let (status, _, err) = try runTool(
            FailSafe.args([input.path], out, "csv", ["--overwrite"]).map {
                $0 == FailSafe.apple ? anchor.path : $0
            })
        #expect(status == 2 && err.contains("the input \(anchor.path)"), "\(err)")
        #expect(FailSafe.snapshot(dir) == before)
    }

    @Test func anInputBesideTheTablesUnderAnotherNameIsLeftAlone() throws {
        let (dir, input, out) = try workspace("beside")
        defer { try? FileManager.default.removeItem(at: dir) }
        let inside = out.appendingPathComponent("receipts-2024.ndjson")
        try FileManager.default.moveItem(at: input, to: inside)
        let bytes = try Data(contentsOf: inside)
        for overwrite in [false, true] {
            let (status, _, err) = try runTool(
                FailSafe.args([inside.path], out, "ndjson", overwrite ? ["--overwrite"] : []))
            #expect(status == 0, "\(err)")
            #expect(try Data(contentsOf: inside) == bytes)
        }
    }

    @Test func overwriteRemovesOnlyTheFilesTheEarlierRunListsAndSaysWhatItKept() throws {
        let (dir, input, out) = try workspace("owned")
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = try FailSafe.lines()
        for (earlier, later) in [("csv", "ndjson"), ("parquet", "csv"), ("ndjson", "parquet")] {
            try? FileManager.default.removeItem(at: out)
            let (s0, _, e0) = try runTool(FailSafe.args([input.path], out, earlier))
            #expect(s0 == 0, "\(e0)")
            // Files named like tables that no summary lists: the third format's table, and a part file.
            let third = Set(["csv", "ndjson", "parquet"]).subtracting([earlier, later]).first!
            let foreign = ["receipts.\(third)", "renewals/part-00009.\(earlier)"]
            for name in foreign {
                let url = out.appendingPathComponent(name)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data("someone else's \(name)\n".utf8).write(to: url)
            }
            let args = FailSafe.args([input.path], out, later, ["--overwrite"]).filter { $0 != "--quiet" }
            let (status, _, err) = try runTool(args)
            #expect(status == 0, "\(earlier) -> \(later): \(err)")
            for name in foreign {
                let text = try String(contentsOf: out.appendingPathComponent(name), encoding: .utf8)
                #expect(text == "someone else's \(name)\n", "\(name)")
                #expect(err.contains("kept") && err.contains(name), "\(err)")
            }
            // The earlier run's own tables are gone, the later run's are complete.
            let listing = Set(try FileManager.default.contentsOfDirectory(atPath: out.path))
            #expect(!listing.contains("receipts.\(earlier)") && listing.contains("receipts.\(later)"), "\(listing)")
            #expect(try FailSafe.summaryRecords(out) == lines.count)
        }
    }

    @Test func aFileNamedLikeThisRunsOutputThatNoRunWroteIsRefusedEvenWithOverwrite() throws {
        let (dir, input, out) = try workspace("foreign")
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, format, extra) in [
            ("receipts.csv", "csv", [String]()), ("summary.json", "ndjson", []), ("purchases.parquet", "parquet", []),
            ("receipts/part-00000.csv", "csv", ["--part-records", "5"]),
        ] {
            try? FileManager.default.removeItem(at: out)
            let url = out.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("not receiptflow's\n".utf8).write(to: url)
            let before = FailSafe.snapshot(out)
            for overwrite in [false, true] {
                let (status, _, err) = try runTool(
                    FailSafe.args([input.path], out, format, extra + (overwrite ? ["--overwrite"] : [])))
                #expect(status == 2 && err.contains(name) && err.contains("no run of receiptflow wrote"), "\(err)")
                #expect(FailSafe.snapshot(out) == before, "\(name)")
            }
        }
    }
}
