import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptTestSupport

@testable import ReceiptVerify

/// A receipt parsed once, with its content copied out so it can be verified any number of times.
struct ParsedReceipt {
    var der: [UInt8]
    var container: SignedDataView
    var content: [UInt8]
    var creationDate: Int64?

    init(_ der: [UInt8]) throws {
        let parser = ReceiptParser()
        self.der = der
        (container, content, creationDate) = try der.withUnsafeBytes { raw in
            try parser.parse(raw)
            let content = parser.withContent(raw) { [UInt8]($0) }
            return (parser.container, content, parser.fields.receiptCreationDate)
        }
    }

    func verify(with verifier: ReceiptVerifier, at time: Int64? = nil) -> VerifyOutcome {
        der.withUnsafeBytes { d in
            content.withUnsafeBytes { c in
                verifier.verify(der: d, container: container, content: c, validationTime: time ?? creationDate ?? 0)
            }
        }
    }
}

enum TestAnchors {
    static var applePath: String { Fixtures.certsDir.appendingPathComponent("AppleIncRootCertificate.cer").path }
    static var storeKitPath: String { Fixtures.certsDir.appendingPathComponent("StoreKitTestCertificate.cer").path }

    static func verifier(_ paths: [String]) throws -> ReceiptVerifier {
        ReceiptVerifier(cache: ChainCache(anchors: try TrustAnchors(paths: paths)))
    }
}

/// Epoch milliseconds of a `YYYY-MM-DDTHH:MM:SSZ` string (test expectations come from expected.json).
func epochMilliseconds(_ iso: String) -> Int64 {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime]
    return Int64(f.date(from: iso)!.timeIntervalSince1970 * 1000)
}
