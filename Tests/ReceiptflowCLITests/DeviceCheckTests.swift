import Foundation
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// Apple's device check (`--device-id-field`, `--require-device-match`, `inspect --device-id`) and version policy
/// (`--app-version`), on receipts signed by the test CA whose hash (attribute 5) is computed here from Apple's
/// formula: SHA-1 of the device identifier's raw bytes, the opaque value and the bundle id's UTF8String TLV.
@Suite struct DeviceCheckTests {
    static let bundle = "com.example.device"
    static let opaque: [UInt8] = [0x5A, 0x01, 0xC3, 0x7E, 0x10, 0x99, 0x42, 0x08]
    /// `E621E1F8-C36C-495A-93FC-0C247A3E6E5F` and `00:1b:63:84:45:e6` as raw bytes.
    static let uuid: [UInt8] = [
        0xE6, 0x21, 0xE1, 0xF8, 0xC3, 0x6C, 0x49, 0x5A, 0x93, 0xFC, 0x0C, 0x24, 0x7A, 0x3E, 0x6E, 0x5F,
    ]
    static let mac: [UInt8] = [0x00, 0x1B, 0x63, 0x84, 0x45, 0xE6]

    /// A receipt made on `device` (attribute 5 from Apple's formula), or without attribute 5 when nil.
    static func receipt(device: [UInt8]?, version: String = "1.0") -> String {
        var b = PayloadBuilder()
        b.utf8(0, "Production")
        b.utf8(2, bundle)
        b.utf8(3, version)
        b.raw(4, opaque, version: 2)
        if let device {
            let bundleTLV = [0x0C, UInt8(bundle.utf8.count)] + Array(bundle.utf8)
            b.raw(5, ReceiptSigner.Digest.sha1.hash(device + opaque + bundleTLV))
        }
        b.date(12, 1_600_000_000_000)
        let der = ReceiptSigner.sign(payload: b.encode(), identity: Hostile.pki.identity(.valid), options: .init())
        return Data(der).base64EncodedString()
    }

    /// One NDJSON line; `device` is the raw JSON value of `device_id` (nil leaves the key out).
    static func line(_ id: String, _ receipt: String, device: String?) -> String {
        let d = device.map { ",\"device_id\":\($0)" } ?? ""
        return "{\"id\":\"\(id)\",\"receipt-data\":\"\(receipt)\"\(d)}\n"
    }

    /// Exports `input` as CSV to standard output; the rows by record id (status, error_code, device_hash_matches).
    static func export(_ input: String, _ options: [String]) throws -> [String: [String: String]] {
        let (status, out, err) = try runTool(
            ["export", "-", "--out", "-", "--format", "csv", "--quiet", "--trust-anchor", Hostile.rootPEM] + options,
            stdin: Data(input.utf8))
        #expect(status == 0, "\(err)")
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n").map(String.init)
        let header = try #require(lines.first).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let deviceColumn = try #require(header.firstIndex(of: "device_hash_matches"))
        // Counted from the end: error_detail may hold commas.
        let fromEnd = header.count - deviceColumn
        var rows: [String: [String: String]] = [:]
        for l in lines.dropFirst() {
            // The columns used here hold no commas or quotes; error_detail does hold commas, so fields are
            // matched from both ends.
            let cells = l.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let status = cells[3]
            let code = cells[4]
            let id = cells[2]
            rows[id] = ["status": status, "error_code": code, "device_hash_matches": cells[cells.count - fromEnd]]
        }
        return rows
    }

    @Test func everyIdentifierFormMatchesTheDeviceItNames() throws {
        let onUUID = Self.receipt(device: Self.uuid)
        let onMAC = Self.receipt(device: Self.mac)
        let forms: [(String, String, String)] = [
            ("uuid-upper", onUUID, "\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\""),
            ("uuid-lower", onUUID, "\"e621e1f8-c36c-495a-93fc-0c247a3e6e5f\""),
            ("uuid-hex", onUUID, "\"E621E1F8C36C495A93FC0C247A3E6E5F\""),
            ("uuid-escaped", onUUID, "\"E621E1F8\\u002DC36C-495A-93FC-0C247A3E6E5F\""),
            ("mac-colons", onMAC, "\"00:1b:63:84:45:e6\""),
            ("mac-dashes", onMAC, "\"00-1B-63-84-45-E6\""),
            ("mac-hex", onMAC, "\"001b638445e6\""),
        ]
        let input = forms.map { Self.line($0.0, $0.1, device: $0.2) }.joined()
        let rows = try Self.export(input, ["--device-id-field", "device_id"])
        for (id, _, _) in forms {
            #expect(rows[id]?["status"] == "0", "\(id)")
            #expect(rows[id]?["device_hash_matches"] == "true", "\(id)")
        }
    }

    @Test func mismatchIsReportedAndRejectedOnlyWhenRequired() throws {
        let input =
            Self.line("other-uuid", Self.receipt(device: Self.uuid), device: "\"00000000-0000-0000-0000-000000000001\"")
            + Self.line("mac-for-uuid", Self.receipt(device: Self.uuid), device: "\"00:1b:63:84:45:e6\"")
            + Self.line("same", Self.receipt(device: Self.mac), device: "\"00:1b:63:84:45:e6\"")
        let reported = try Self.export(input, ["--device-id-field", "device_id"])
        #expect(reported["other-uuid"] == ["status": "0", "error_code": "", "device_hash_matches": "false"])
        #expect(reported["mac-for-uuid"] == ["status": "0", "error_code": "", "device_hash_matches": "false"])
        #expect(reported["same"] == ["status": "0", "error_code": "", "device_hash_matches": "true"])

        let required = try Self.export(input, ["--device-id-field", "device_id", "--require-device-match"])
        #expect(
            required["other-uuid"] == [
                "status": "21003", "error_code": "device_mismatch", "device_hash_matches": "false",
            ])
        #expect(required["mac-for-uuid"]?["error_code"] == "device_mismatch")
        #expect(required["same"] == ["status": "0", "error_code": "", "device_hash_matches": "true"])
    }

    @Test func malformedIdentifierHasItsOwnCode() throws {
        let r = Self.receipt(device: Self.uuid)
        let bad = [
            "\"not-a-device\"", "\"00:1b:63:84:45\"", "\"E621E1F8-C36C-495A-93FC-0C247A3E6E5\"",
            "\"E621E1F8:C36C-495A-93FC-0C247A3E6E5F\"", "\"00:1b-63:84:45:e6\"", "\"\"", "12345", "true", "{}",
        ]
        let input = bad.enumerated().map { Self.line("bad-\($0.offset)", r, device: $0.element) }.joined()
        let rows = try Self.export(input, ["--device-id-field", "device_id"])
        for k in bad.indices {
            #expect(
                rows["bad-\(k)"] == ["status": "21002", "error_code": "invalid_device_id", "device_hash_matches": ""],
                "\(bad[k])")
        }
    }

    @Test func noIdentifierOrNoHashIsNull() throws {
        let input =
            Self.line("no-key", Self.receipt(device: Self.uuid), device: nil)
            + Self.line("null", Self.receipt(device: Self.uuid), device: "null")
            + Self.line("no-attribute-5", Self.receipt(device: nil), device: "\"00:1b:63:84:45:e6\"")
        for options in [
            ["--device-id-field", "device_id"], ["--device-id-field", "device_id", "--require-device-match"],
        ] {
            let rows = try Self.export(input, options)
            for id in ["no-key", "null", "no-attribute-5"] {
                #expect(rows[id] == ["status": "0", "error_code": "", "device_hash_matches": ""], "\(id) \(options)")
            }
        }
        // Without the option the column is null even when the records carry an identifier.
        let rows = try Self.export(Self.line("x", Self.receipt(device: Self.mac), device: "\"00:1b:63:84:45:e6\""), [])
        #expect(rows["x"] == ["status": "0", "error_code": "", "device_hash_matches": ""])
    }

    @Test func appVersionPolicyRejectsOtherVersions() throws {
        let input =
            Self.line("v1", Self.receipt(device: nil, version: "1.0"), device: nil)
            + Self.line("v2", Self.receipt(device: nil, version: "2.1"), device: nil)
        let one = try Self.export(input, ["--app-version", "1.0"])
        #expect(one["v1"]?["status"] == "0")
        #expect(one["v2"]?["status"] == "21003")
        #expect(one["v2"]?["error_code"] == "wrong_app_version")
        let both = try Self.export(input, ["--app-version", "2.1", "--app-version", "1.0"])
        #expect(both["v1"]?["status"] == "0")
        #expect(both["v2"]?["status"] == "0")
    }

    @Test func requireDeviceMatchNeedsTheField() throws {
        let (status, _, err) = try runTool(["export", "-", "--out", "-", "--format", "csv", "--require-device-match"])
        #expect(status == 2)
        #expect(err.contains("--device-id-field"))
    }

    @Test func inspectShowsTheCheck() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("r.b64").path
        try Data(Self.receipt(device: Self.uuid).utf8).write(to: URL(fileURLWithPath: path))
        for (id, expected) in [("E621E1F8-C36C-495A-93FC-0C247A3E6E5F", true), ("00:1b:63:84:45:e6", false)] {
            let (status, out, err) = try runTool(
                ["inspect", path, "--trust-anchor", Hostile.rootPEM, "--json", "--device-id", id])
            #expect(status == 0, "\(err)")
            let json = try #require(try JSONSerialization.jsonObject(with: out) as? [String: Any])
            #expect(json["device_hash_matches"] as? Bool == expected)
        }
        let (status, _, err) = try runTool(["inspect", path, "--no-verify", "--device-id", "nope"])
        #expect(status == 2)
        #expect(err.contains("--device-id"))
    }
}
