import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How many sorted runs a spill merge may read at once, from the process's descriptor limit: the soft
/// `RLIMIT_NOFILE` less the descriptors already open and a reserve for what the rest of the run opens meanwhile
/// (the merge's own output, a spill file being appended, the tables' files). A merge of more runs than this goes in
/// passes (`SpillStore`), so that neither the input's size nor a low `ulimit -n` makes the history fail.
enum DescriptorBudget {
    /// Descriptors left for the rest of the run while a merge holds its runs open.
    static let reserve = 16
    /// Upper bound of the fan-in whatever the limit: each open run holds a 64 KB read buffer, so 256 runs hold
    /// 16 MB beside the memory budget, and two passes then merge 65,536 runs.
    static let maximumFanIn = 256
    /// The smallest merge that still makes progress.
    static let minimumFanIn = 2

    /// The fan-in for a merge starting now.
    static func mergeFanIn() -> Int {
        fanIn(limit: softLimit(), open: openDescriptors())
    }

    /// The fan-in for a descriptor `limit` with `open` descriptors in use.
    static func fanIn(limit: Int?, open: Int?) -> Int {
        // Unknown counts: assume the smallest limit a system is commonly given and a busy process.
        let available = (limit ?? 256) - (open ?? 64) - reserve
        return min(maximumFanIn, max(minimumFanIn, available))
    }

    /// The soft limit on open descriptors; nil when it cannot be read. Unlimited reads as `Int.max`.
    static func softLimit() -> Int? {
        var l = rlimit()
        #if canImport(Glibc)
            let status = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &l)
        #else
            let status = getrlimit(RLIMIT_NOFILE, &l)
        #endif
        guard status == 0 else { return nil }
        return Int(clamping: l.rlim_cur)
    }

    /// How many descriptors the process has open, from its descriptor folder (`/dev/fd`: `/proc/self/fd` on
    /// Linux); nil when the folder cannot be listed. The listing's own descriptor is not counted.
    static func openDescriptors() -> Int? {
        guard let dir = opendir("/dev/fd") else { return nil }
        defer { closedir(dir) }
        var count = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { $0.prefix { $0 != 0 } }
            if name.elementsEqual(".".utf8) || name.elementsEqual("..".utf8) { continue }
            count += 1
        }
        return max(count - 1, 0)
    }
}
