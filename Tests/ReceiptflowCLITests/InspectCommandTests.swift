import Foundation
import ReceiptTestSupport
import Testing

/// Runs the built `receiptflow` binary and returns (exit status, stdout, stderr); `environment` adds variables to
/// this process's environment.
func runTool(_ args: [String], stdin: Data? = nil, environment: [String: String] = [:]) throws -> (Int32, Data, String)
{
    let p = Process()
    p.executableURL = Fixtures.executable
    p.arguments = args
    if !environment.isEmpty {
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let out = Pipe()
    let err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let inPipe = Pipe()
    if stdin != nil { p.standardInput = inPipe }
    try p.run()
    if let stdin {
        inPipe.fileHandleForWriting.write(stdin)
        try inPipe.fileHandleForWriting.close()
    }
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, o, String(decoding: e, as: UTF8.self))
}

@Suite
struct InspectCommandTests {
    static let apple = Fixtures.certsDir.appendingPathComponent("AppleIncRootCertificate.cer").path
    static let storeKit = Fixtures.certsDir.appendingPathComponent("StoreKitTestCertificate.cer").path

    static func json(_ d: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: d) as? [String: Any])
    }

    /// The verifyreceipt fixture: inspect's receipt object equals Apple's response, key for key
    /// (except server-only request_date*), and its verdict is valid.
    @Test func matchesAppleVerifyReceiptResponse() throws {
        let der = Fixtures.verifyReceiptDir.appendingPathComponent("whitepaek_consumable.der").path
        let (status, out, _) = try runTool(["inspect", der, "--trust-anchor", Self.apple, "--json"])
        #expect(status == 0)
        let got = try Self.json(out)
        let response = try Self.json(
            Data(contentsOf: Fixtures.verifyReceiptDir.appendingPathComponent("whitepaek_consumable.response.json")))
        #expect(got["status"] as? Int == response["status"] as? Int)
        #expect(got["environment"] as? String == response["environment"] as? String)
        var expected = try #require(response["receipt"] as? [String: Any])
        for k in expected.keys where k.hasPrefix("request_date") { expected.removeValue(forKey: k) }
        let receipt = try #require(got["receipt"] as? [String: Any])
        #expect(NSDictionary(dictionary: receipt).isEqual(to: expected), "\(receipt)\n!=\n\(expected)")
    }

    @Test func acceptsBase64OnStandardInputWithLineBreaks() throws {
        let der = try Data(contentsOf: Fixtures.realDir.appendingPathComponent("kvitto_sandboxReceipt.der"))
        let b64 = der.base64EncodedData(options: [.lineLength64Characters, .endLineWithLineFeed])
        let (status, out, _) = try runTool(["inspect", "-", "--trust-anchor", Self.apple, "--json"], stdin: b64)
        #expect(status == 0)
        let got = try Self.json(out)
        let container = try #require(got["container"] as? [String: Any])
        #expect(container["input"] as? String == "base64")
        #expect(container["digest_algorithm"] as? String == "sha1")
        #expect((container["certificates"] as? [Any])?.count == 3)
    }

    @Test func xcodeReceiptNeedsTheStoreKitAnchor() throws {
        let der = Fixtures.realDir.appendingPathComponent("apple_xcode-app-receipt-with-transaction.der").path
        let (s1, o1, _) = try runTool(["inspect", der, "--trust-anchor", Self.apple, "--json"])
        #expect(s1 == 1)
        #expect(try Self.json(o1)["error_code"] as? String == "untrusted_chain")
        let (s2, o2, e2) = try runTool(["inspect", der, "--trust-anchor", Self.storeKit, "--json"])
        #expect(s2 == 0)
        #expect(try Self.json(o2)["status"] as? Int == 0)
        #expect(e2.contains("it is not an Apple root"))  // the one-line notice for a non-Apple anchor
        #expect(e2.split(separator: "\n").count == 1)
        let (s3, _, e3) = try runTool(["inspect", der, "--trust-anchor", Self.storeKit, "--json", "--quiet"])
        #expect(s3 == 0)
        #expect(e3.isEmpty)
    }

    @Test func judgedNowTheCertificatesHaveExpired() throws {
        let der = Fixtures.realDir.appendingPathComponent("kvitto_sandboxReceipt.der").path
        let (status, out, _) = try runTool(["inspect", der, "--trust-anchor", Self.apple, "--json", "--at", "now"])
        #expect(status == 1)
        let got = try Self.json(out)
        #expect(got["status"] as? Int == 21003)
        #expect(got["error_code"] as? String == "certificate_expired")
        // Judged at --at, not at the creation date: the detail names the time it used.
        let detail = got["error_detail"] as? String ?? ""
        #expect(detail.contains("before the given validation time"))
        #expect(!detail.contains("creation date"))
    }

    @Test func withoutAnAnchorApplesBuiltInRootsVerify() throws {
        let der = Fixtures.realDir.appendingPathComponent("kvitto_sandboxReceipt.der").path
        let (status, out, err) = try runTool(["inspect", der, "--json"])
        #expect(status == 0)
        #expect(err.isEmpty)
        let verification = try #require(try Self.json(out)["verification"] as? [String: Any])
        #expect(verification["verified"] as? Bool == true)
        let anchors = try #require(verification["trust_anchors"] as? [String])
        #expect(anchors.count == 2)
        #expect(anchors.contains { $0.contains("b0b1") && $0.contains("f024") })
    }

    @Test func garbageIsMalformedWithDecodedNothing() throws {
        let (status, out, _) = try runTool(["inspect", "-", "--no-verify", "--json"], stdin: Data("MIIB!!!".utf8))
        #expect(status == 1)
        let got = try Self.json(out)
        #expect(got["status"] as? Int == 21002)
        #expect(got["error_code"] as? String == "invalid_base64")
    }

    @Test func aFileThatCannotBeReadIsNamedWithTheReason() throws {
        let missing = "/nonexistent/receipt.der"
        let (s1, out1, e1) = try runTool(["inspect", missing, "--no-verify"])
        #expect(s1 == 1 && out1.isEmpty)
        #expect(
            e1 == "receiptflow inspect: cannot open input '\(missing)': \(String(cString: strerror(ENOENT))); "
                + "check the path and its permissions\n")
        let dir = FileManager.default.temporaryDirectory.path
        let (s2, out2, e2) = try runTool(["inspect", dir, "--no-verify"])
        #expect(s2 == 1 && out2.isEmpty)
        #expect(e2 == "receiptflow inspect: input '\(dir)' is a directory; give the files inside it instead\n")
    }
}
