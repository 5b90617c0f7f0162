import ReceiptPipeline
import Testing

@Suite struct ExportOptionsTests {
    /// What a command line gave, for `ExportOptions.identity`.
    private static func given(_ pairs: [(String, String)]) -> (String) -> [String] {
        { name in pairs.filter { $0.0 == name }.map(\.1) }
    }

    @Test func everyOptionIsDeclaredOnceAsAFlagOrWithAValue() {
        let names = ExportOptions.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(ExportOptions.flags.isDisjoint(with: ExportOptions.valued))
        #expect(ExportOptions.flags.union(ExportOptions.valued) == Set(names))
    }

    @Test func theIdentityHoldsEveryOutputOptionAndNoOther() {
        let id = ExportOptions.identity(given: Self.given([]), canonical: [:])
        let output = Set(ExportOptions.all.filter(\.changesOutput).map(\.name))
        #expect(Set(id.keys) == output)
        for name in [
            "--as-of", "--no-history", "--base", "--environment", "--bundle-id", "--app-version", "--field",
            "--id-field", "--device-id-field", "--require-device-match", "--no-verify", "--trust-anchor", "--format",
            "--max-record-size",
        ] {
            #expect(output.contains(name), "\(name)")
        }
        for name in ["--threads", "--progress", "--quiet", "--out", "--resume", "--overwrite", "--part-records"] {
            #expect(!output.contains(name), "\(name)")
        }
    }

    @Test func aGivenValueFlagOrCanonicalValueChangesTheIdentityAndRepeatsAreASet() {
        let none = ExportOptions.identity(given: Self.given([]), canonical: [:])
        for option in ExportOptions.all where option.changesOutput {
            let value = option.kind == .flag ? "" : "x"
            let changed = ExportOptions.identity(given: Self.given([(option.name, value)]), canonical: [:])
            #expect(changed[option.name] != none[option.name], "\(option.name)")
            #expect(changed.filter { $0.key != option.name } == none.filter { $0.key != option.name })
            let canonical = ExportOptions.identity(given: Self.given([]), canonical: [option.name: "c"])
            #expect(canonical[option.name] == "c")
        }
        let ab = ExportOptions.identity(
            given: Self.given([("--bundle-id", "a"), ("--bundle-id", "b")]), canonical: [:])
        let ba = ExportOptions.identity(
            given: Self.given([("--bundle-id", "b"), ("--bundle-id", "a"), ("--bundle-id", "b")]), canonical: [:])
        #expect(ab == ba)
    }
}
