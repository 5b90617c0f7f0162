import Foundation

/// Command-line tools (gzip, bzip2, zstd) as the tests' independent producers of real archives.
public enum ToolFilter {
    /// Runs `tool` with `input` on standard input and returns its standard output; nil when the tool is not
    /// installed or fails.
    public static func run(_ tool: String, _ args: [String], _ input: [UInt8]) throws -> [UInt8]? {
        guard let path = ["/usr/bin/", "/bin/"].map({ $0 + tool }).first(where: FileManager.default.isExecutableFile)
        else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        let i = Pipe()
        let o = Pipe()
        p.standardInput = i
        p.standardOutput = o
        try p.run()
        // Written from another thread: a tool whose output fills the pipe would otherwise block the writer.
        let writer = Thread {
            i.fileHandleForWriting.write(Data(input))
            try? i.fileHandleForWriting.close()
        }
        writer.start()
        let out = o.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return p.terminationStatus == 0 ? [UInt8](out) : nil
    }
}
