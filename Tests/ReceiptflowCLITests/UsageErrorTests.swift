import CommandArguments
import Foundation
import Testing

/// Argument errors are codes with the option and value at fault; the reason is rendered from them.
@Suite struct UsageErrorTests {
    private static func scan(_ argv: [String]) -> UsageError? {
        do throws(UsageError) {
            let a = try Arguments(argv, flags: ["--quiet"], valued: ["--threads"])
            _ = try a.int("--threads")
            return nil
        } catch {
            return error
        }
    }

    @Test func theScannerSaysWhichOptionAndWhatIsWrongWithIt() {
        #expect(Self.scan(["--bogus"]) == UsageError(.unknownOption, option: "--bogus"))
        #expect(Self.scan(["--threads"]) == UsageError(.missingValue, option: "--threads"))
        #expect(Self.scan(["--quiet=1"]) == UsageError(.unexpectedValue, option: "--quiet"))
        let e = Self.scan(["--threads", "many"])
        #expect(e?.code == .invalidValue && e?.value == "many")
        #expect(e?.message == "--threads takes a whole number, got 'many'")
        #expect(Self.scan(["--threads", "4", "--quiet"]) == nil)
    }

    @Test func aSingleValuedOptionGivenTwiceIsRefusedAndARepeatableOneIsNot() throws(UsageError) {
        let e = Self.scan(["--threads", "2", "--threads=4"])
        #expect(e == UsageError(.repeatedOption, option: "--threads", value: "2", detail: "4"))
        #expect(e?.message == "--threads was given twice ('2', then '4'); it takes one value, give it once")
        let a = try Arguments(
            ["--anchor", "a", "--anchor", "b"], flags: [], valued: ["--anchor"], repeatable: ["--anchor"])
        #expect(a.values("--anchor") == ["a", "b"])
    }

    /// Every command refuses a repeated single-valued option with status 2 before doing anything.
    @Test(arguments: [
        ["export", "x.ndjson", "--out", "o1", "--id-field", "a", "--id-field", "b"],
        ["export", "x.ndjson", "--out", "o1", "--out", "o2"],
        ["export", "x.ndjson", "--out", "o1", "--format", "csv", "--format=ndjson"],
        ["export", "x.ndjson", "--out", "o1", "--field", "r", "--field", "r"],
        ["export", "x.ndjson", "--out", "o1", "--as-of", "2024-01-01", "--as-of", "2025-01-01"],
        ["inspect", "x.der", "--at", "now", "--at", "now"],
        ["generate", "--count", "3", "--count", "4", "--out", "x.ndjson"],
        ["bench", "x.ndjson", "--threads", "1", "--threads", "2"],
    ])
    func everyCommandRefusesARepeatedSingleValuedOption(argv: [String]) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("repeat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (status, _, err) = try runTool(argv.map { $0.hasPrefix("o") && $0.count == 2 ? dir.path + $0 : $0 })
        #expect(status == 2, "\(err)")
        #expect(err.contains("was given twice"), "\(err)")
        #expect(err.contains("give it once"))
    }

    @Test func repeatableOptionsStillRepeat() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("repeat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (status, _, err) = try runTool(
            [
                "export", "-", "--out", dir.path, "--no-verify", "--bundle-id", "a", "--bundle-id", "b",
                "--app-version", "1", "--app-version", "2", "--quiet",
            ], stdin: Data())
        #expect(status == 0, "\(err)")
    }

    @Test func reasonsRenderFromTheirParts() {
        #expect(
            UsageError(.invalidValue, option: "--threads", value: "0", expected: "1 to 1024").message
                == "--threads takes 1 to 1024, got 0")
        #expect(UsageError(.missingOption, option: "--out FILE").message == "--out FILE is required")
        #expect(
            UsageError(.missingOption, option: "--out DIR", expected: "where to write").message
                == "--out DIR is required: where to write")
        #expect(
            UsageError(.emptyValue, option: "--field", expected: "a non-empty key name").message
                == "--field needs a non-empty key name")
        #expect(UsageError(message: "give one FILE").code == .other)
    }
}
