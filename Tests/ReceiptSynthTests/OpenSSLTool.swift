import Foundation

/// Runs the `openssl` command-line tool, an independent judge of the receipts the generator signs.
enum OpenSSLTool {
    /// The `openssl` binary on PATH, or nil (scripts/test.sh checks for it up front; the tests that need it fail).
    static let path: String? = {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return dirs.map { "\($0)/openssl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// A fresh temporary directory for one test.
    static func tempDir() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("synth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `openssl cms -verify -binary -inform DER -CAfile root -purpose any -in der`: true when it exits 0.
    /// The verified content goes to `contentOut` when given.
    static func cmsVerify(der: [UInt8], rootPEM: String, in dir: URL, name: String, contentOut: URL? = nil) throws
        -> Bool
    {
        let input = dir.appendingPathComponent("\(name).der")
        let root = dir.appendingPathComponent("root.pem")
        try Data(der).write(to: input)
        try Data(rootPEM.utf8).write(to: root)
        var args = [
            "cms", "-verify", "-binary", "-inform", "DER", "-CAfile", root.path, "-purpose", "any", "-in", input.path,
        ]
        args += ["-out", (contentOut ?? dir.appendingPathComponent("\(name).out")).path]
        return try run(args) == 0
    }

    static func run(_ args: [String]) throws -> Int32 {
        guard let path else {
            throw CocoaError(
                .fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "the openssl binary is not on PATH"])
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }
}
