import Foundation
import Testing

/// Locates test inputs: the shared fixtures beside the checkout (`../shared/fixtures`, or `$RECEIPTFLOW_SHARED`)
/// and the project's own committed sample data in `data/`.
public enum Fixtures {
    /// The package root, found from this file's path (Tests/ReceiptTestSupport/Fixtures.swift).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared` beside the checkout, or `$RECEIPTFLOW_SHARED`.
    public static let sharedDir: URL = {
        if let env = ProcessInfo.processInfo.environment["RECEIPTFLOW_SHARED"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    }()

    public static var realDir: URL { sharedDir.appendingPathComponent("fixtures/real") }
    public static var certsDir: URL { sharedDir.appendingPathComponent("fixtures/certs") }
    public static var verifyReceiptDir: URL { sharedDir.appendingPathComponent("fixtures/verifyreceipt") }
    public static var dataDir: URL { packageRoot.appendingPathComponent("data") }

    /// True when `../shared/fixtures/real/expected.json` exists. Tests that need it are disabled otherwise, with
    /// `skipReason` as the comment.
    public static var sharedAvailable: Bool {
        FileManager.default.fileExists(atPath: realDir.appendingPathComponent("expected.json").path)
    }
    public static let skipReason: Comment =
        "../shared/fixtures is absent (set RECEIPTFLOW_SHARED to the shared folder to run these tests)"

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
