import Foundation

/// Holds records merged by key within a memory budget; beyond it, spills them to hash partitions on disk.
///
/// Records go to the current *segment* (a folder of partition files `p-NNN.run`). A resumable run seals one
/// segment per committed part; a plain run has one. `reduce` then merges every segment partition by partition:
/// each partition is read back into memory, with its share of the records still in memory (never written), and
/// merged by key (a partition larger than the budget is split again with another hash seed), sorted into a run
/// file, and the runs are merged in row order, at most `fanIn` at a time:
/// more runs than that are merged in passes, each pass merging groups of `fanIn` runs into one, until one pass can
/// merge them all. Every spilled byte is thus read a bounded number of times (one pass per factor of `fanIn` in the
/// number of runs), and the rows are those of a single merge: keys are distinct across runs, so the order is total.
/// Memory stays within about the budget plus one read buffer per run merged at once; descriptors within the fan-in
/// plus one (a spill file is open only while a buffer is written to it). A record type with an order prefix
/// (`SpillPrefixed`) is merged and sorted in its encoded form (`SpillPartition`), its key and order read from the
/// prefix: a record that meets no other of its key is decoded once, by the final merge, whose heap compares the
/// runs' heads by their order keys' bytes while each run's head is decoded in place.
final class SpillStore<R: SpillRecord> {
    static var partitionCount: Int { 64 }

    private var memory: [R.Key: R] = [:]
    private var memoryBytes = 0
    let budget: Int
    /// Where the work files of `reduce` go.
    let workDirectory: String
    private var segment: String
    private var appenders: [SpillAppender?]
    /// Folders of sealed segments, in the order they were made or adopted.
    private(set) var segments: [String] = []
    /// Bytes written to spill files so far (segments, re-partitions and sorted runs).
    private(set) var spilledBytes: Int64 = 0
    /// Records written to spill files so far (each time one is written).
    private(set) var spilledRecords: Int64 = 0
    private var codecStorage: SpillBlockCodec? = nil
    /// A record's encoding before it is framed.
    private var scratch = SpillWriter()
    /// A record's order key before it is framed.
    private var scratchKey: [UInt8] = []
    private var workCounter = 0
    /// How many runs one merge reads at once; nil: from the descriptor limit when the merge starts
    /// (`DescriptorBudget`). Tests set a small one.
    let fanIn: Int?

    init(segment: String, workDirectory: String, budget: Int, fanIn: Int? = nil) {
        self.segment = segment
        self.workDirectory = workDirectory
        self.budget = max(budget, 1 << 16)
        self.fanIn = fanIn.map { max($0, DescriptorBudget.minimumFanIn) }
        appenders = Array(repeating: nil, count: Self.partitionCount)
    }

    /// The block codec, made when the store first spills.
    private func codec() throws(HistoryError) -> SpillBlockCodec {
        if let c = codecStorage { return c }
        let c = try SpillBlockCodec()
        codecStorage = c
        return c
    }

    /// Appends `record` to `w`, framed, and counts it.
    private func frame(_ record: R, into w: inout SpillWriter) {
        appendFramed(record, into: &w, scratch: &scratch, key: &scratchKey)
        spilledRecords += 1
    }

    /// Writes the framed records of `w` to `file` as one block and empties `w`.
    private func write(_ w: inout SpillWriter, to file: SpillAppender) throws(HistoryError) {
        spilledBytes += Int64(try file.append(w.bytes))
        w.bytes.removeAll(keepingCapacity: true)
    }

    func add(_ record: R) throws(HistoryError) {
        let k = record.storeKey
        if memory[k]?.merge(record) == nil {
            memoryBytes += record.estimatedBytes
            memory[k] = record
            if memoryBytes > budget { try spill() }
        }
    }

    /// Writes the records in memory to the current segment's partitions.
    func spill() throws(HistoryError) {
        guard !memory.isEmpty else { return }
        try spill(memory.values)
        memory = [:]
        memoryBytes = 0
    }

    /// Writes `records` (merged by key elsewhere, each key once) to the current segment's partitions.
    func spill(_ records: some Collection<R>) throws(HistoryError) {
        guard !records.isEmpty else { return }
        try makeDirectory(segment)
        var writers = [SpillWriter](repeating: SpillWriter(), count: Self.partitionCount)
        for r in records {
            let p = r.partition(Self.partitionCount, seed: 0)
            frame(r, into: &writers[p])
            if writers[p].bytes.count >= SpillFormat.blockBytes { try write(&writers[p], to: try appender(p)) }
        }
        for p in 0..<Self.partitionCount where !writers[p].bytes.isEmpty {
            try write(&writers[p], to: try appender(p))
        }
        for a in appenders { try a?.flush() }
    }

    private func appender(_ p: Int) throws(HistoryError) -> SpillAppender {
        if let a = appenders[p] { return a }
        let a = try SpillAppender(path: segment + "/" + Self.partitionName(p), codec: try codec())
        appenders[p] = a
        return a
    }

    static func partitionName(_ p: Int) -> String {
        let digits = String(p)
        return "p-" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits + ".run"
    }

    /// Spills what is in memory, syncs and closes the current segment's files, and renames its folder to `final`
    /// (synced too), so that the segment survives a crash from here on. Later records go to `next`.
    func seal(as final: String, next: String) throws(HistoryError) {
        try spill()
        try makeDirectory(segment)
        for a in appenders { try a?.close(sync: true) }
        appenders = Array(repeating: nil, count: Self.partitionCount)
        if rename(segment, final) != 0 {
            throw HistoryError.system("cannot rename the history spill to \(final):", segment)
        }
        syncDirectory((final as NSString).deletingLastPathComponent)
        segments.append(final)
        segment = next
    }

    /// Counts the folder of a segment sealed by an earlier attempt of the run.
    func adopt(_ folder: String) { segments.append(folder) }

    /// Every record merged by key, in row order, given to `emit` one at a time. `pending` are records merged
    /// by key outside the store, none of whose keys the store holds in memory.
    func reduce(pending: [R] = [], _ emit: (R) throws(HistoryError) -> Void) throws(HistoryError) {
        let spilled = segments.count > 0 || appenders.contains { $0 != nil }
        if !spilled {
            let held = memory.isEmpty ? pending : Array(memory.values) + pending
            memory = [:]
            memoryBytes = 0
            for i in R.rowOrder(held) { try emit(held[Int(i)]) }
            return
        }
        // What is still in memory is not written out: each partition's share joins its reduce.
        // Positions, not copies, so that the records are held once.
        let all = memory.isEmpty ? pending : Array(memory.values) + pending
        memory = [:]
        memoryBytes = 0
        var shares = [[Int32]](repeating: [], count: Self.partitionCount)
        for (i, r) in all.enumerated() { shares[r.partition(Self.partitionCount, seed: 0)].append(Int32(i)) }
        for a in appenders { try a?.close(sync: false) }
        appenders = Array(repeating: nil, count: Self.partitionCount)
        var folders = segments
        if FileManager.default.fileExists(atPath: segment) { folders.append(segment) }
        try makeDirectory(workDirectory)
        var runs: [String] = []
        for p in 0..<Self.partitionCount {
            let files = folders.map { $0 + "/" + Self.partitionName(p) }.filter {
                FileManager.default.fileExists(atPath: $0)
            }
            let held = shares[p].map { all[Int($0)] }
            shares[p] = []
            try reducePartition(files, held: held, seed: 1, depth: 0, into: &runs)
        }
        try mergeRuns(runs, fanIn: fanIn ?? DescriptorBudget.mergeFanIn(), emit)
    }

    /// Merges the records of `files` and `held` by key and writes them sorted as one run; when they do not fit the
    /// budget, splits them into sub-partitions by another hash seed first.
    private func reducePartition(
        _ files: [String], held: [R] = [], seed: UInt64, depth: Int, into runs: inout [String]
    ) throws(HistoryError) {
        guard !files.isEmpty || !held.isEmpty else { return }
        if R.hasOrderPrefix {
            return try reduceEncoded(files, held: held, seed: seed, depth: depth, into: &runs)
        }
        var table: [R.Key: R] = [:]
        var bytes = 0
        var overflow: [SpillAppender?] = []
        var overflowWriters: [SpillWriter] = []
        let fan = 16
        func take(_ r: R) throws(HistoryError) {
            if !overflow.isEmpty {
                let p = r.partition(fan, seed: seed)
                frame(r, into: &overflowWriters[p])
                if overflowWriters[p].bytes.count >= SpillFormat.blockBytes {
                    try flushOverflow(p, &overflow, &overflowWriters)
                }
                return
            }
            let k = r.storeKey
            if table[k]?.merge(r) == nil {
                bytes += r.estimatedBytes
                table[k] = r
            }
            if bytes > budget && depth < 8 {
                // Too big for memory: this partition is split by a new seed, what is held included.
                overflow = Array(repeating: nil, count: fan)
                overflowWriters = Array(repeating: SpillWriter(), count: fan)
                for (p, name) in (0..<fan).map({ ($0, nextWorkName()) }) {
                    overflow[p] = try SpillAppender(path: name, codec: try codec())
                }
                for h in table.values {
                    let p = h.partition(fan, seed: seed)
                    frame(h, into: &overflowWriters[p])
                    if overflowWriters[p].bytes.count >= SpillFormat.blockBytes {
                        try flushOverflow(p, &overflow, &overflowWriters)
                    }
                }
                table = [:]
                bytes = 0
            }
        }
        for r in held { try take(r) }
        for f in files {
            let scanner = try SpillScanner<R>(path: f, codec: try codec())
            while let r = try scanner.next() { try take(r) }
        }
        if !overflow.isEmpty {
            return try reduceSubpartitions(
                &overflow, &overflowWriters, replacing: files, seed: seed, depth: depth, into: &runs)
        }
        let held = Array(table.values)
        table = [:]
        let run = try SpillAppender(path: nextWorkName(), codec: try codec(), bufferBytes: 256 << 10)
        var w = SpillWriter()
        for i in R.rowOrder(held) {
            frame(held[Int(i)], into: &w)
            if w.bytes.count >= SpillFormat.blockBytes { try write(&w, to: run) }
        }
        try write(&w, to: run)
        try run.close(sync: false)
        for f in files where f.hasPrefix(workDirectory) { unlink(f) }
        runs.append(run.path)
    }

    /// `reducePartition` for records spilled with their order prefix: merged by key and sorted as encoded
    /// (`SpillPartition`), so that a record alone of its key is copied, never decoded.
    private func reduceEncoded(
        _ files: [String], held: [R], seed: UInt64, depth: Int, into runs: inout [String]
    ) throws(HistoryError) {
        var table = SpillPartition<R>()
        var overflow: [SpillAppender?] = []
        var overflowWriters: [SpillWriter] = []
        let fan = 16
        func framed(_ record: UnsafeRawBufferPointer, into w: inout SpillWriter) {
            w.varint(UInt64(record.count))
            w.bytes.append(contentsOf: record)
            spilledRecords += 1
        }
        func divert(_ record: UnsafeRawBufferPointer, _ p: Int) throws(HistoryError) {
            framed(record, into: &overflowWriters[p])
            if overflowWriters[p].bytes.count >= SpillFormat.blockBytes {
                try flushOverflow(p, &overflow, &overflowWriters)
            }
        }
        func take(_ record: UnsafeRawBufferPointer) throws(HistoryError) {
            if !overflow.isEmpty {
                let h = try SpillPrefixed(record).hash(seed: seed)
                return try divert(record, Int(h % UInt64(fan)))
            }
            try table.add(record)
            if table.bytes > budget && depth < 8 {
                // Too big for memory: this partition is split by a new seed, what is held included.
                overflow = Array(repeating: nil, count: fan)
                overflowWriters = Array(repeating: SpillWriter(), count: fan)
                for p in 0..<fan { overflow[p] = try SpillAppender(path: nextWorkName(), codec: try codec()) }
                try table.forEach(count: fan, seed: seed) { r, p throws(HistoryError) in try divert(r, p) }
                table = SpillPartition()
            }
        }
        var w = SpillWriter()
        for r in held {
            w.bytes.removeAll(keepingCapacity: true)
            SpillPrefixed.append(r, to: &w, key: &scratchKey)
            try spillBytes(w.bytes) { b throws(HistoryError) in try take(b) }
        }
        for f in files {
            let scanner = try SpillScanner<R>(path: f, codec: try codec())
            while try scanner.nextEncoded({ b throws(HistoryError) in try take(b) }) {}
        }
        if !overflow.isEmpty {
            return try reduceSubpartitions(
                &overflow, &overflowWriters, replacing: files, seed: seed, depth: depth, into: &runs)
        }
        let run = try SpillAppender(path: nextWorkName(), codec: try codec(), bufferBytes: 256 << 10)
        w.bytes.removeAll(keepingCapacity: true)
        try table.sorted { r throws(HistoryError) in
            framed(r, into: &w)
            if w.bytes.count >= SpillFormat.blockBytes { try write(&w, to: run) }
        }
        try write(&w, to: run)
        try run.close(sync: false)
        for f in files where f.hasPrefix(workDirectory) { unlink(f) }
        runs.append(run.path)
    }

    /// Closes the sub-partitions a partition was split into, removes the partition's own work files, and reduces
    /// each sub-partition by the next hash seed.
    private func reduceSubpartitions(
        _ overflow: inout [SpillAppender?], _ writers: inout [SpillWriter], replacing files: [String], seed: UInt64,
        depth: Int, into runs: inout [String]
    ) throws(HistoryError) {
        var subfiles: [String] = []
        for p in overflow.indices {
            try flushOverflow(p, &overflow, &writers)
            try overflow[p]!.close(sync: false)
            subfiles.append(overflow[p]!.path)
        }
        for f in files where f.hasPrefix(workDirectory) { unlink(f) }
        for f in subfiles {
            try reducePartition([f], seed: seed + 1, depth: depth + 1, into: &runs)
        }
    }

    private func flushOverflow(_ p: Int, _ files: inout [SpillAppender?], _ writers: inout [SpillWriter])
        throws(HistoryError)
    {
        guard !writers[p].bytes.isEmpty else { return }
        try write(&writers[p], to: files[p]!)
    }

    private func nextWorkName() -> String {
        workCounter += 1
        return workDirectory + "/w-\(workCounter).run"
    }

    /// Merges sorted runs into `emit`, at most `fanIn` at a time: while there are more, each group of `fanIn`
    /// consecutive runs is merged into a new run (a pass), so that a run's bytes are read once per pass.
    private func mergeRuns(_ initial: [String], fanIn: Int, _ emit: (R) throws(HistoryError) -> Void)
        throws(HistoryError)
    {
        var runs = initial
        while runs.count > fanIn {
            var next: [String] = []
            next.reserveCapacity((runs.count + fanIn - 1) / fanIn)
            var start = 0
            while start < runs.count {
                let group = Array(runs[start..<min(start + fanIn, runs.count)])
                start += fanIn
                guard group.count > 1 else {
                    next.append(group[0])
                    continue
                }
                let merged = try SpillAppender(path: nextWorkName(), codec: try codec(), bufferBytes: 256 << 10)
                var w = SpillWriter()
                try merge(group) { r throws(HistoryError) in
                    frame(r, into: &w)
                    if w.bytes.count >= SpillFormat.blockBytes { try write(&w, to: merged) }
                }
                try write(&w, to: merged)
                try merged.close(sync: false)
                next.append(merged.path)
            }
            runs = next
        }
        try merge(runs, emit)
    }

    /// The k-way merge of sorted runs, through a binary heap of their positions: each run's head record is decoded
    /// in place over the one before it, and the heap moves positions, never records. Records with an order prefix
    /// are compared by their order keys' bytes, others by `precedes`. The runs are removed after it.
    private func merge(_ runs: [String], _ emit: (R) throws(HistoryError) -> Void) throws(HistoryError) {
        var scanners: [SpillScanner<R>] = []
        var heads: [R] = []
        var orders: [[UInt8]] = []
        var heap: [Int] = []
        for path in runs {
            let s = try SpillScanner<R>(path: path, codec: try codec())
            var order: [UInt8] = []
            if let r = try s.next(order: &order) {
                heap.append(scanners.count)
                scanners.append(s)
                heads.append(r)
                orders.append(order)
            }
        }
        let prefixed = R.hasOrderPrefix
        try heads.withUnsafeMutableBufferPointer { heads throws(HistoryError) in
            // Keys are distinct across runs (a key lives in one partition), so the order is total.
            func less(_ a: Int, _ b: Int) -> Bool {
                guard prefixed else { return R.precedes(heads[a], heads[b]) }
                return orders[a].withUnsafeBytes { x in orders[b].withUnsafeBytes { y in compareBytes(x, y) < 0 } }
            }
            func down(_ i0: Int) {
                var i = i0
                let n = heap.count
                while true {
                    let l = 2 * i + 1
                    let r = l + 1
                    var m = i
                    if l < n && less(heap[l], heap[m]) { m = l }
                    if r < n && less(heap[r], heap[m]) { m = r }
                    if m == i { return }
                    heap.swapAt(i, m)
                    i = m
                }
            }
            for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { down(i) }
            while !heap.isEmpty {
                let s = heap[0]
                try emit(heads[s])
                if try !scanners[s].next(into: &heads[s], order: &orders[s]) {
                    heap[0] = heap[heap.count - 1]
                    heap.removeLast()
                }
                if !heap.isEmpty { down(0) }
            }
        }
        for path in runs { unlink(path) }
    }
}

/// `mkdir -p` for spill folders; a failure names the folder and the system's reason (a full disk its own code).
func makeDirectory(_ path: String) throws(HistoryError) {
    var prefix = ""
    for (i, part) in path.split(separator: "/", omittingEmptySubsequences: false).enumerated() {
        prefix += (i == 0 ? "" : "/") + part
        if prefix.isEmpty { continue }
        if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
            throw HistoryError.system("cannot create the history spill folder", prefix)
        }
    }
    var st = stat()
    if stat(path, &st) != 0 || (st.st_mode & S_IFMT) != S_IFDIR {
        throw HistoryError(
            .systemFailure, action: "cannot create the history spill folder", path: path, errno: ENOTDIR,
            reason: String(cString: strerror(ENOTDIR)))
    }
}

/// Syncs a folder so that a rename inside it survives a crash (best effort: some file systems refuse).
func syncDirectory(_ path: String) {
    let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if fd >= 0 {
        _ = fsync(fd)
        close(fd)
    }
}
