import Foundation
import ReceiptModel
import ReceiptPipeline
import Testing

@Suite struct PartManifestTests {
    static func identity() -> RunIdentity {
        var config = PipelineConfig()
        config.bundleIDs = ["com.b", "com.a"]
        return RunIdentity(
            format: "parquet",
            inputs: [
                InputFingerprint(
                    path: "in.ndjson", size: 10, mtimeNanoseconds: 1_700_000_000_123_456_789, headSHA256: "ab",
                    headBytes: 10)
            ],
            options: RowOptions(config: config, trustAnchorsSHA256: ["FF", "0a"]))
    }

    static func counts(records: Int, valid: Int, code: ErrorCode?) -> BatchCounts {
        var c = BatchCounts()
        c.records = records
        c.transactions = 2 * valid
        c.blankLines = 1
        c.inputBytes = 100 * records
        c.byStatus[ReceiptStatus.allCases.firstIndex(of: .valid)!] = valid
        if let code {
            c.byStatus[ReceiptStatus.allCases.firstIndex(of: .malformed)!] = records - valid
            c.byCode[ErrorCode.allCases.firstIndex(of: code)!] = records - valid
        }
        return c
    }

    static func manifest() -> PartManifest {
        var m = PartManifest(identity: identity(), partRecords: 300)
        let a = counts(records: 300, valid: 290, code: .invalidJSON)
        let b = counts(records: 120, valid: 120, code: nil)
        m.parts = [
            PartEntry(
                index: 0, files: ["receipts/part-00000.csv", "transactions/part-00000.csv"],
                start: InputPosition(source: 0, line: 0), end: InputPosition(source: 0, line: 301), firstRecord: 0,
                records: 300, transactions: a.transactions, counts: StoredCounts(a)),
            PartEntry(
                index: 1, files: ["receipts/part-00001.csv", "transactions/part-00001.csv"],
                start: InputPosition(source: 0, line: 301), end: InputPosition(source: 1, line: 120), firstRecord: 300,
                records: 120, transactions: b.transactions, counts: StoredCounts(b)),
        ]
        m.resume = ResumePoint(position: InputPosition(source: 1, line: 120), sourceBytes: 4096)
        m.attempts = 2
        m.elapsedSeconds = 1.5
        return m
    }

    private static func tempDir() throws -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("rf-manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d.path
    }

    @Test func writesAndLoadsBackTheSameManifestAtomically() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try PartManifest.load(from: dir) == nil)
        let m = Self.manifest()
        try m.write(to: dir)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["manifest.json"])
        #expect(try PartManifest.load(from: dir) == m)
    }

    @Test func usesSnakeCaseKeysAndNamesStatusesAndCodes() throws {
        let text = String(decoding: try Self.manifest().encoded(), as: UTF8.self)
        for key in [
            "\"manifest_version\" : 1", "\"part_records\" : 300", "\"first_record\" : 300", "\"tool_version\"",
            "\"mtime_ns\" : 1700000000123456789", "\"head_sha256\" : \"ab\"", "\"source_bytes\" : 4096",
            "\"invalid_json\" : 10", "\"21002\" : 10", "\"bundle_ids\"", "\"trust_anchors_sha256\"",
        ] {
            #expect(text.contains(key), "\(key)")
        }
        // Options that do not change rows are normalized: sorted, anchors in lower case.
        #expect(Self.identity().options.bundleIDs == ["com.a", "com.b"])
        #expect(Self.identity().options.trustAnchorsSHA256 == ["0a", "ff"])
    }

    @Test func addsUpTheCountsOfEveryPart() throws {
        let m = Self.manifest()
        var want = Self.counts(records: 300, valid: 290, code: .invalidJSON)
        want.add(Self.counts(records: 120, valid: 120, code: nil))
        #expect(try m.totalCounts() == want)
        #expect(m.records == 420)
    }

    @Test func refusesAnUnknownCodeAVersionItDoesNotReadAndGarbage() throws {
        var stored = StoredCounts(BatchCounts())
        stored.byErrorCode["no_such_code"] = 1
        #expect(throws: ManifestError.self) { _ = try stored.counts() }

        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/manifest.json"
        var m = Self.manifest()
        m.manifestVersion = 2
        try Data(try m.encoded()).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try PartManifest.load(from: dir)
        } throws: {
            ($0 as? ManifestError)?.message.contains("manifest version 2") == true
        }
        try Data("{\"parts\": [".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try PartManifest.load(from: dir)
        } throws: {
            ($0 as? ManifestError)?.message.contains("without --resume") == true
        }
    }
}

/// Manifest failures are codes with the path and value at fault.
@Suite struct ManifestErrorTests {
    @Test func unknownNamesInTheCountsAreTheirOwnCodes() {
        var stored = StoredCounts(BatchCounts())
        stored.byErrorCode["no_such_code"] = 1
        #expect(throws: ManifestError(.unknownErrorCode, value: "no_such_code")) { _ = try stored.counts() }
        stored = StoredCounts(BatchCounts())
        stored.byStatus["12345"] = 1
        #expect(throws: ManifestError(.unknownStatus, value: "12345")) { _ = try stored.counts() }
    }

    @Test func damagedAndNewerManifestsNameTheFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("manifest.json").path
        try Data("[1,".utf8).write(to: URL(fileURLWithPath: path))
        do throws(ManifestError) {
            _ = try PartManifest.load(from: dir.path)
            Issue.record("a damaged manifest was read")
        } catch {
            #expect(error.code == .unreadable && error.path == path)
            #expect(error.message.hasPrefix("cannot read \(path): "))
        }
        #expect(
            ManifestError(.unsupportedVersion, path: path, value: "2").message
                == "\(path) has manifest version 2, this receiptflow reads version 1; resume with the receiptflow "
                + "that began the run, or start over")
    }
}
