import CommandArguments
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
