import Foundation
import ReceiptTestSupport
import Testing

/// `inspect` and `export` judge receipts with the same evaluator: for every real fixture receipt they give the
/// same status, error code, error detail and decoded receipt.
@Suite
struct InspectExportAgreementTests {
    static func anchors(_ names: [String]) -> [String] {
        names.flatMap { ["--trust-anchor", Fixtures.certsDir.appendingPathComponent($0).path] }
    }

    /// Decoding only; Apple's root alone (the Xcode receipts are then untrusted); Apple's and StoreKit's roots.
    static let runs: [[String]] = [
        ["--no-verify"],
        anchors(["AppleIncRootCertificate.cer"]),
        anchors(["AppleIncRootCertificate.cer", "StoreKitTestCertificate.cer"]),
    ]

    /// The fields both commands render for one receipt.
    struct Judged: Equatable, CustomStringConvertible {
        var status: Int?
        var errorCode: String?
        var errorDetail: String?
        var receipt: NSDictionary?

        init(_ object: [String: Any]) {
            status = object["status"] as? Int
            errorCode = object["error_code"] as? String
            errorDetail = object["error_detail"] as? String
            receipt = (object["receipt"] as? [String: Any]).map { NSDictionary(dictionary: $0) }
        }

        var description: String {
            "status \(status.map(String.init) ?? "nil") \(errorCode ?? "-") \(errorDetail ?? "-") \(receipt?.description ?? "no receipt")"
        }
    }

    @Test(arguments: runs) func sameVerdictAndFieldsForEveryFixture(options: [String]) throws {
        let names = Fixtures.realReceiptNames()
        try #require(names.count > 10)
        var ndjson = ""
        for name in names {
            let der = try Data(contentsOf: Fixtures.realDir.appendingPathComponent(name))
            ndjson += "{\"id\":\"\(name)\",\"receipt-data\":\"\(der.base64EncodedString())\"}\n"
        }
        let (status, out, err) = try runTool(
            ["export", "-", "--out", "-", "--format", "ndjson", "--threads", "2", "--quiet"] + options,
            stdin: Data(ndjson.utf8))
        #expect(status == 0, "\(err)")
        let lines = out.split(separator: UInt8(ascii: "\n"))
        try #require(lines.count == names.count)
        var codes = Set<String>()
        for (name, line) in zip(names, lines) {
            let exported = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            #expect(exported["record_id"] as? String == name)
            let path = Fixtures.realDir.appendingPathComponent(name).path
            let (_, inspectOut, _) = try runTool(["inspect", path, "--json"] + options)
            let inspected = try #require(try JSONSerialization.jsonObject(with: inspectOut) as? [String: Any])
            let a = Judged(exported)
            let b = Judged(inspected)
            #expect(a == b, "\(name): export \(a) != inspect \(b)")
            codes.insert(a.errorCode ?? "valid")
        }
        // With Apple's root alone the Xcode receipts are untrusted: both outcomes are compared.
        if options.count == 2 { #expect(codes == ["valid", "untrusted_chain"]) }
    }
}
