import Foundation
import ReceiptTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One run of the `receiptflow` binary with the peak memory it used.
///
/// The peak RSS comes from GNU time (`/usr/bin/time -f %M`), which forks the tool from its own small process.
/// Neither `getrusage(RUSAGE_CHILDREN)` (it mixes in every child the parallel tests spawn) nor `wait4` on a child
/// spawned from here works: Linux carries the spawning process's high-water mark into the child's `ru_maxrss`
/// across `exec`, so every child would report at least the test process's own peak.
struct MeasuredRun {
    var status: Int32
    var stdout: Data
    var stderr: String
    /// Peak resident set size of the tool, in bytes; nil when /usr/bin/time is not installed.
    var maxRSS: Int?
    /// User plus system CPU time of the child, in seconds.
    var cpuSeconds: Double
    var wallSeconds: Double

    /// True when this test process (and so the tool built beside it) runs under ASan or TSan.
    static let sanitized: Bool = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(handle) }
        return dlsym(handle, "__asan_init") != nil || dlsym(handle, "__tsan_init") != nil
    }()

    /// Runs the tool with `args`, standard input from `stdin` (or /dev/null), standard output and error to files.
    static func run(_ args: [String], stdin: URL? = nil) throws -> MeasuredRun {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-measured-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let outPath = dir.appendingPathComponent("stdout").path
        let errPath = dir.appendingPathComponent("stderr").path
        let tool = Fixtures.executable.path
        let timePath = "/usr/bin/time"
        let measured = FileManager.default.isExecutableFile(atPath: timePath)
        let rssPath = dir.appendingPathComponent("rss").path
        let command = measured ? [timePath, "-f", "%M", "-o", rssPath, tool] + args : [tool] + args

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin?.path ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        let argv = command.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let start = DispatchTime.now()
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
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
        // GNU time writes the kilobytes on the last line of its output file (after a note when the tool failed).
        let rssText = measured ? (try? String(contentsOfFile: rssPath, encoding: .utf8)) ?? "" : ""
        let kilobytes = rssText.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        return MeasuredRun(
            status: status, stdout: try Data(contentsOf: URL(fileURLWithPath: outPath)),
            stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self),
            maxRSS: kilobytes.map { $0 * 1024 },
            // CPU time is not inflated the way ru_maxrss is; it covers GNU time too, which is negligible.
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime), wallSeconds: wall)
    }
}
