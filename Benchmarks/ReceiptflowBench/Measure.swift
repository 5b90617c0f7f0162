import CMallocCount
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Clocks, allocation counts and memory high-water marks, read the same way by every benchmark.
enum Measure {
    /// Monotonic wall clock, seconds.
    static func wall() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// CPU time of the calling thread, seconds: unlike the wall clock it does not grow when other processes
    /// take the cores, so single-thread stage costs stay comparable on a busy machine.
    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// User + system CPU time of the whole process (all threads), seconds.
    static func processCPU() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec)
            + Double(u.ru_stime.tv_usec) / 1e6
    }

    /// Heap allocations so far (malloc, calloc, realloc, posix_memalign, aligned_alloc; every thread).
    static func mallocs() -> UInt64 { rf_malloc_count() }

    /// Peak resident set size in MB since the last `resetPeakRSS()` (VmHWM), or since start (ru_maxrss) when
    /// /proc is not there.
    static func peakRSSMB() -> Double {
        if let s = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = s.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kb = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        {
            return kb / 1024
        }
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_maxrss) / 1024
    }

    /// Resets VmHWM to the current RSS (Linux: writing 5 to /proc/self/clear_refs), so that the next
    /// `peakRSSMB()` is the peak of what runs in between. Returns false when the kernel does not allow it.
    /// Freed heap memory is first handed back to the system (malloc_trim), so that what an earlier step freed
    /// (the corpus generated in the same process) is not counted in the next peak.
    @discardableResult
    static func resetPeakRSS() -> Bool {
        rf_malloc_trim()
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    /// The 1-minute load average, for the report (wall-clock numbers mean little when it exceeds the cores).
    static func loadAverage() -> Double {
        var l = [0.0, 0.0, 0.0]
        return getloadavg(&l, 3) > 0 ? l[0] : -1
    }
}
