import Foundation
import ReceiptTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One run of the `receiptflow` binary with the resources it used, read from `wait4` for that child alone
/// (`getrusage(RUSAGE_CHILDREN)` would mix in every other child the parallel tests spawn).
struct MeasuredRun {
    var status: Int32
    var stdout: Data
    var stderr: String
    /// Peak resident set size of the child, in bytes.
    var maxRSS: Int
    /// User plus system CPU time of the child, in seconds.
    var cpuSeconds: Double
    var wallSeconds: Double

    /// Runs the tool with `args`, standard input from `stdin` (or /dev/null), standard output and error to files.
    static func run(_ args: [String], stdin: URL? = nil) throws -> MeasuredRun {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-measured-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let outPath = dir.appendingPathComponent("stdout").path
        let errPath = dir.appendingPathComponent("stderr").path
        let tool = Fixtures.executable.path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin?.path ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        let argv = ([tool] + args).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let start = DispatchTime.now()
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, tool, &actions, nil, argv, environ)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL) }
        var wstatus: Int32 = 0
        var usage = rusage()
        while wait4(pid, &wstatus, 0, &usage) < 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EINVAL) }
        }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        // WIFEXITED / WEXITSTATUS, spelled out (the macros are not imported): a signal shows as 128 + number.
        let status = wstatus & 0x7F == 0 ? (wstatus >> 8) & 0xFF : 128 + (wstatus & 0x7F)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return MeasuredRun(
            status: status, stdout: try Data(contentsOf: URL(fileURLWithPath: outPath)),
            stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self),
            maxRSS: Int(usage.ru_maxrss) * 1024,  // kilobytes on Linux
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime), wallSeconds: wall)
    }
}
