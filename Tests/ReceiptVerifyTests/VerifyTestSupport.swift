import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptSynth
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

    /// - Parameter remembered: pass the SHA-256 of the bytes (as the pipeline does), so that the verdict is
    ///   remembered or reused.
    func verify(with verifier: ReceiptVerifier, at time: Int64? = nil, remembered: Bool = false) -> VerifyOutcome {
        der.withUnsafeBytes { d in
            content.withUnsafeBytes { c in
                verifier.verify(
                    der: d, container: container, content: c, at: time.map { .instant($0) } ?? .receiptCreationDate,
                    creationDate: creationDate, receiptDigest: remembered ? ContentHasher().sha256(d) : nil)
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

/// The project's own test CA (from ReceiptSynth), derived once per test process, and receipts signed by it.
enum TestCA {
    static let pki: TestPKI = {
        // Deriving the keys is deterministic; a failure here means ReceiptSynth is broken, not this module.
        do { return try TestPKI.load(directory: nil) } catch { fatalError("TestPKI: \(error)") }
    }()

    static func anchors() throws -> TrustAnchors {
        try TrustAnchors(certificates: [(source: "test-root", bytes: pki.root.der)])
    }

    static func verifier(capacity: Int = 4096) throws -> ReceiptVerifier {
        ReceiptVerifier(cache: ChainCache(anchors: try anchors(), capacity: capacity))
    }

    /// A small payload dated `created` (epoch ms), with `marker` to make payloads distinct.
    static func payload(created: Int64, marker: String = "a") -> [UInt8] {
        var b = PayloadBuilder()
        b.utf8(0, "ProductionSandbox")
        b.integer(1, 0)
        b.utf8(2, "com.example.receiptflow.\(marker)")
        b.utf8(3, "1.0")
        b.date(12, created)
        b.utf8(19, "1.0")
        return b.encode()
    }

    /// 2020-06-01T00:00:00Z: inside the genuine leaf's validity (2010-2038).
    static let created2020: Int64 = 1_590_969_600_000

    static func receipt(
        _ variant: TestPKI.Variant = .valid, created: Int64 = created2020, marker: String = "a",
        _ configure: (inout ReceiptSigner.Options) -> Void = { _ in }
    ) throws -> ParsedReceipt {
        var options = ReceiptSigner.Options()
        configure(&options)
        let der = ReceiptSigner.sign(
            payload: payload(created: created, marker: marker), identity: pki.identity(variant), options: options)
        return try ParsedReceipt(der)
    }
}

/// A boolean set by one thread and read by another.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var held = false
    var value: Bool { lock.withLock { held } }
    func set(_ v: Bool) { lock.withLock { held = v } }
}
