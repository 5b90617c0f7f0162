import Foundation
import ReceiptPipeline
import Testing

@Suite struct RunIdentityTests {
    private static func file(_ bytes: [UInt8]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rf-identity-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url.path
    }

    private static func identity(
        _ paths: [String], _ configure: (inout PipelineConfig) -> Void = { _ in },
        anchors: [String] = ["aa"], format: String = "csv"
    ) throws -> RunIdentity {
        var config = PipelineConfig()
        configure(&config)
        return RunIdentity(
            format: format, inputs: try paths.map { try InputFingerprint.of($0) },
            options: RowOptions(config: config, trustAnchorsSHA256: anchors))
    }

    @Test func fingerprintsSizeModificationTimeAndTheFirstMegabyte() throws {
        let big = [UInt8](repeating: 0x41, count: (1 << 20) + 10)
        let path = try Self.file(big)
        let f = try InputFingerprint.of(path)
        #expect(f.size == big.count && f.headBytes == 1 << 20 && f.mtimeNanoseconds != nil)
        // SHA-256 of one MiB of "A", computed independently (Python's hashlib).
        #expect(f.headSHA256 == "4e29ad18ab9f42d7c233500771a39d7c852b200baf328fd00fbbe3fecea1eb56")
        let small = try InputFingerprint.of(try Self.file(Array("abc".utf8)))
        #expect(small.headBytes == 3)
        #expect(small.headSHA256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let stdin = try InputFingerprint.of("-")
        #expect(stdin.size == nil && stdin.headSHA256 == nil && !stdin.canResume)
        #expect(f.canResume)
        // A named pipe is looked at, never opened: opening would block, reading would consume it.
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("rf-fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let pipe = try InputFingerprint.of(fifo)
        #expect(!pipe.canResume && pipe.headBytes == 0)
    }

    @Test func theSameCommandMatchesWhateverTheOrderOfBundleIDsAndAnchorsAndTheThreadCount() throws {
        let path = try Self.file(Array("line\n".utf8))
        let a = try Self.identity(
            [path],
            {
                $0.bundleIDs = ["x", "y"]; $0.threads = 1
            }, anchors: ["AA", "bb"])
        let b = try Self.identity(
            [path],
            {
                $0.bundleIDs = ["y", "x"]; $0.threads = 8
            }, anchors: ["bb", "aa"])
        #expect(b.mismatch(resuming: a) == nil)
    }

    @Test func namesEveryOptionThatChangesRows() throws {
        let path = try Self.file(Array("line\n".utf8))
        let base = try Self.identity([path])
        let changes: [(String, (inout PipelineConfig) -> Void)] = [
            ("--field", { $0.field = "receipt" }),
            ("--id-field", { $0.idField = nil }),
            ("--environment", { $0.environment = .production }),
            ("--bundle-id", { $0.bundleIDs = ["com.a"] }),
            ("--no-verify", { $0.verify = false }),
            ("--max-record-size", { $0.reader.maxRecordSize = 4096 }),
        ]
        for (option, change) in changes {
            let m = try #require(try Self.identity([path], change).mismatch(resuming: base), "\(option)")
            #expect(m.changedInputs.isEmpty && m.commandLine.count == 1, "\(option): \(m.reasons)")
            #expect(m.commandLine.first?.contains(option) == true, "\(m.commandLine)")
        }
        let anchors = try #require(try Self.identity([path], anchors: ["cc"]).mismatch(resuming: base))
        #expect(anchors.commandLine.first?.contains("--trust-anchor") == true)
        let format = try #require(try Self.identity([path], format: "parquet").mismatch(resuming: base))
        #expect(format.commandLine == ["--format is parquet, the run used csv"])
        let other = try Self.file(Array("line\n".utf8))
        let inputs = try #require(try Self.identity([path, other]).mismatch(resuming: base))
        #expect(inputs.commandLine.first?.hasPrefix("the inputs are") == true)
        var older = base
        older.toolVersion = "0.0.1"
        #expect(base.mismatch(resuming: older)?.commandLine.first?.contains("0.0.1") == true)
    }

    @Test func tellsAChangedInputApartFromAChangedCommandLine() throws {
        let path = try Self.file(Array("first\n".utf8))
        let before = try Self.identity([path])
        try Data("first\nsecond\n".utf8).write(to: URL(fileURLWithPath: path))
        let m = try #require(try Self.identity([path]).mismatch(resuming: before))
        #expect(m.commandLine.isEmpty)
        #expect(m.changedInputs.count == 1)
        #expect(m.changedInputs[0].contains("size 6 → 13 bytes") && m.changedInputs[0].contains("content"))
    }

    @Test func namesEachChangedOutputOptionWithBothValues() throws {
        let path = try Self.file(Array("line\n".utf8))
        let base = try Self.identity([path])
        let options = ExportOptions.identity(given: { _ in [] }, canonical: ["--format": "csv"])
        var recorded = base
        recorded.outputOptions = options
        for (name, value) in [
            ("--as-of", "2024-05-01T00:00:00.000Z"), ("--no-history", "given"), ("--app-version", "1.0"),
            ("--device-id-field", "device"), ("--trust-anchor", "ab"), ("--environment", "sandbox"),
        ] {
            var now = recorded
            now.outputOptions?[name] = value
            let m = try #require(now.mismatch(resuming: recorded), "\(name)")
            #expect(m.commandLine.count == 1 && m.changedInputs.isEmpty, "\(m.reasons)")
            let reason = m.commandLine[0]
            #expect(reason.hasPrefix(name + " is '\(value)'") && reason.contains("'\(options[name]!)'"), "\(reason)")
        }
        #expect(recorded.mismatch(resuming: recorded) == nil)
        // A manifest made without a command line's options cannot be continued by a command line with them.
        #expect(recorded.mismatch(resuming: base)?.commandLine.isEmpty == false)
        // An option the row options already name is named once.
        var noVerify = recorded
        noVerify.options.verify = false
        noVerify.outputOptions?["--no-verify"] = "given"
        #expect(noVerify.mismatch(resuming: recorded)?.commandLine.count == 1)
    }
}
