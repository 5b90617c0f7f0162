import Foundation

/// Holds records merged by key within a memory budget; beyond it, spills them to hash partitions on disk.
///
/// Records go to the current *segment* (a folder of partition files `p-NNN.run`). A resumable run seals one
/// segment per committed part; a plain run has one. `reduce` then merges every segment partition by partition:
/// each partition is read back into memory, with its share of the records the caller still holds, and
/// merged by key (a partition larger than the budget is split again with another hash seed), sorted into a run
/// file (`SpillReducer`; partitions are reduced on `threads` threads, each with its own reducer and a share of
/// the budget, and since a key lives in one partition the thread that reduces it cannot change the rows), and the
/// runs are merged in row order, at most `fanIn` at a time:
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
    /// The least memory budget a store takes, whatever it is given.
    static var minimumBudget: Int { 1 << 16 }

    private var memory: [R.Key: R] = [:]
    private var memoryBytes = 0
    let budget: Int
    /// Where the work files of `reduce` go.
    let workDirectory: String
    private var segment: String
    private var appenders: [SpillAppender?]
    /// Folders of sealed segments, in the order they were made or adopted.
    private(set) var segments: [String] = []
    /// Bytes written to spill files so far (segments, re-partitions, sorted runs and merge passes).
    var spilledBytes: Int64 { own.spilledBytes + reducedBytes }
    /// Records written to spill files so far (each time one is written).
    var spilledRecords: Int64 { own.spilledRecords + reducedRecords }
    /// Writes the segments and the merge passes (and, on one thread, reduces the partitions).
    private let own: SpillReducer<R>
    /// What the reducers of other threads wrote, counted when they are done.
    private var reducedBytes: Int64 = 0
    private var reducedRecords: Int64 = 0
    /// How many threads a large spill is written on and `reduce` merges partitions on (each with a share of the
    /// budget).
    var threads = 1
    /// Reducers (a zstd context, scratch, counters each) of the threads a large spill is written on, made with the
    /// first.
    private var spillers: [SpillReducer<R>] = []
    /// Spills of fewer records than this are written on one thread.
    static var parallelSpillMinimum: Int { 4096 }
    /// How many runs one merge reads at once; nil: from the descriptor limit when the merge starts
    /// (`DescriptorBudget`). Tests set a small one.
    let fanIn: Int?

    init(segment: String, workDirectory: String, budget: Int, fanIn: Int? = nil) {
        self.segment = segment
        self.workDirectory = workDirectory
        self.budget = max(budget, Self.minimumBudget)
        self.fanIn = fanIn.map { max($0, DescriptorBudget.minimumFanIn) }
        appenders = Array(repeating: nil, count: Self.partitionCount)
        own = SpillReducer(workDirectory: workDirectory, prefix: "w-", budget: self.budget)
    }

    private func codec() throws(HistoryError) -> SpillBlockCodec { try own.codec() }
    private func frame(_ record: R, into w: inout SpillWriter) { own.frame(record, into: &w) }
    private func write(_ w: inout SpillWriter, to file: SpillAppender) throws(HistoryError) {
        try own.write(&w, to: file)
    }
    private func nextWorkName() -> String { own.nextWorkName() }

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

    /// Writes `records` (merged by key elsewhere, each key once) to the current segment's partitions: on `threads`
    /// threads when they are many and held contiguously (each partition's file is the same either way).
    func spill(_ records: some Collection<R>) throws(HistoryError) {
        guard !records.isEmpty else { return }
        try makeDirectory(segment)
        let workers = max(1, min(threads, Self.partitionCount))
        if workers > 1 && records.count >= Self.parallelSpillMinimum {
            let result: Result<Void, HistoryError>? = records.withContiguousStorageIfAvailable { all in
                do throws(HistoryError) {
                    return .success(try spill(all, workers: workers))
                } catch {
                    return .failure(error)
                }
            }
            if let result { return try result.get() }
        }
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

    /// `spill` on `workers` threads: each takes the next partition and writes its records with a reducer of its
    /// own (its zstd context and scratch) to that partition's file, which no other thread touches.
    private func spill(_ records: UnsafeBufferPointer<R>, workers: Int) throws(HistoryError) {
        var shares = [[Int32]](repeating: [], count: Self.partitionCount)
        for i in records.indices { shares[records[i].partition(Self.partitionCount, seed: 0)].append(Int32(i)) }
        // Every file is opened here, so that the threads only use what exists.
        for p in shares.indices where !shares[p].isEmpty { _ = try appender(p) }
        let files = appenders
        while spillers.count < workers {
            spillers.append(SpillReducer(workDirectory: workDirectory, prefix: "s-\(spillers.count)-", budget: budget))
        }
        let spillers = Array(self.spillers.prefix(workers))
        let before = spillers.map { ($0.spilledBytes, $0.spilledRecords) }
        defer {
            for (s, b) in zip(spillers, before) {
                reducedBytes += s.spilledBytes - b.0
                reducedRecords += s.spilledRecords - b.1
            }
        }
        try reduceInParallel(Self.partitionCount, workers: workers) { w, p throws(HistoryError) in
            guard let file = files[p], !shares[p].isEmpty else { return }
            var writer = SpillWriter()
            for i in shares[p] {
                spillers[w].frame(records[Int(i)], into: &writer)
                if writer.bytes.count >= SpillFormat.blockBytes { try spillers[w].write(&writer, to: file) }
            }
            try spillers[w].write(&writer, to: file)
            try file.flush()
        }
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

    /// Records held in memory.
    var heldCount: Int { memory.count }

    /// Whether records have gone to disk (in this run or a sealed segment adopted from an earlier attempt).
    var hasSpilled: Bool { !segments.isEmpty || appenders.contains { $0 != nil } }

    /// Counts the folder of a segment sealed by an earlier attempt of the run.
    func adopt(_ folder: String) { segments.append(folder) }

    /// Every record merged by key, in row order, given to `emit` one at a time. `pending` are records merged
    /// by key outside the store, none of whose keys the store holds in memory.
    ///
    /// Once the store has spilled, what it holds in memory is written out before the partitions are reduced, so
    /// that the reduce's own tables (at most the budget) are all it holds; `pending` stays with the caller, who
    /// should spill it first (`spill(_:)`) to keep the same bound.
    func reduce(pending: [R] = [], _ emit: (R) throws(HistoryError) -> Void) throws(HistoryError) {
        if !hasSpilled {
            let held = memory.isEmpty ? pending : Array(memory.values) + pending
            memory = [:]
            memoryBytes = 0
            for i in R.rowOrder(held) { try emit(held[Int(i)]) }
            return
        }
        try spill()
        // Each partition's share of `pending` joins its reduce: positions, not copies, so that the records are held
        // once.
        let all = pending
        var shares = [[Int32]](repeating: [], count: Self.partitionCount)
        for (i, r) in all.enumerated() { shares[r.partition(Self.partitionCount, seed: 0)].append(Int32(i)) }
        for a in appenders { try a?.close(sync: false) }
        appenders = Array(repeating: nil, count: Self.partitionCount)
        var folders = segments
        if FileManager.default.fileExists(atPath: segment) { folders.append(segment) }
        try makeDirectory(workDirectory)
        let runs = try reducePartitions(folders, all: all, shares: &shares)
        try mergeRuns(runs, fanIn: fanIn ?? DescriptorBudget.mergeFanIn(), emit)
    }

    /// Reduces each partition (its files in `folders`, and the records of `all` at its `shares`) into sorted runs,
    /// on `threads` threads, each with a reducer and a share of the budget of its own; returns the runs in
    /// partition order. Every thread has returned when this does, whether it throws or not.
    private func reducePartitions(_ folders: [String], all: [R], shares: inout [[Int32]]) throws(HistoryError)
        -> [String]
    {
        let workers = max(1, min(threads, Self.partitionCount))
        // A share is never below the least budget a store takes: smaller, partitions would be split again and
        // again into many small files.
        let share = max(budget / workers, Self.minimumBudget)
        let reducers =
            workers == 1
            ? [own]
            : (0..<workers).map {
                SpillReducer<R>(workDirectory: workDirectory, prefix: "w-\($0)-", budget: share)
            }
        defer {
            for r in reducers where r !== own {
                reducedBytes += r.spilledBytes
                reducedRecords += r.spilledRecords
            }
        }
        var runsOf = [[String]](repeating: [], count: Self.partitionCount)
        try runsOf.withUnsafeMutableBufferPointer { runsOf throws(HistoryError) in
            try shares.withUnsafeMutableBufferPointer { shares throws(HistoryError) in
                // Each partition's slots of `runsOf` and `shares` are touched by the one thread reducing it;
                // `folders` and `all` are only read.
                try reduceInParallel(Self.partitionCount, workers: workers) { w, p throws(HistoryError) in
                    let files = folders.map { $0 + "/" + Self.partitionName(p) }.filter { access($0, F_OK) == 0 }
                    let held = shares[p].map { all[Int($0)] }
                    shares[p] = []
                    try reducers[w].reducePartition(files, held: held, seed: 1, depth: 0, into: &runsOf[p])
                }
            }
        }
        return runsOf.flatMap { $0 }
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
