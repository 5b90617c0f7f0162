import Foundation

/// Locates test inputs: the public fixtures committed in `Tests/Fixtures` (real receipts, Apple's certificates,
/// a verifyReceipt response; `Tests/Fixtures/PROVENANCE.md` says where each came from) and the project's committed
/// sample data in `data/`.
public enum Fixtures {
    /// The package root, found from this file's path (Tests/ReceiptTestSupport/Fixtures.swift).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Tests/Fixtures` in the checkout.
    public static var fixturesDir: URL { packageRoot.appendingPathComponent("Tests/Fixtures") }
    public static var realDir: URL { fixturesDir.appendingPathComponent("real") }
    public static var certsDir: URL { fixturesDir.appendingPathComponent("certs") }
    public static var verifyReceiptDir: URL { fixturesDir.appendingPathComponent("verifyreceipt") }
    public static var jwsDir: URL { fixturesDir.appendingPathComponent("jws") }
    public static var dataDir: URL { packageRoot.appendingPathComponent("data") }

    /// Names of the real receipt fixtures (`*.der`), sorted.
    public static func realReceiptNames() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: realDir.path) else { return [] }
        return names.filter { $0.hasSuffix(".der") }.sorted()
    }

    public static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// `expected.json` as a dictionary keyed by fixture file name.
    public static func expected() throws -> [String: Any] {
        let data = try Data(contentsOf: realDir.appendingPathComponent("expected.json"))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// The path of the built `receiptflow` executable next to the test bundle (for end-to-end tests).
    public static var executable: URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("receiptflow")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/receiptflow")
    }
}
