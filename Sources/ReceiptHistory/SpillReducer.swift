import Foundation

/// The work of one thread of a spill store's reduce: merges a partition's records by key and writes them sorted as
/// one run file. It owns everything that work writes to (zstd contexts, scratch buffers, the names of its work
/// files, its byte and record counters) and a memory budget of its own, so that reducers on different threads
/// share nothing but the read-only inputs they are given. The store's own spills and merge passes go through one too.
final class SpillReducer<R: SpillRecord> {
    /// Where the work files go; their names begin with `prefix` and are unique within this reducer.
    let workDirectory: String
    private let prefix: String
    /// Memory for one partition's records; beyond it the partition is split again by another hash seed.
    let budget: Int
    /// Bytes written to spill files by this reducer (segments, re-partitions and sorted runs).
    private(set) var spilledBytes: Int64 = 0
    /// Records written to spill files by this reducer (each time one is written).
    private(set) var spilledRecords: Int64 = 0
    private var codecStorage: SpillBlockCodec? = nil
    /// A record's encoding before it is framed.
    private var scratch = SpillWriter()
    /// A record's order key before it is framed.
    private var scratchKey: [UInt8] = []
    private var workCounter = 0

    init(workDirectory: String, prefix: String, budget: Int) {
        self.workDirectory = workDirectory
        self.prefix = prefix
        self.budget = budget
    }

    /// The block codec, made when first needed.
    func codec() throws(HistoryError) -> SpillBlockCodec {
        if let c = codecStorage { return c }
        let c = try SpillBlockCodec()
        codecStorage = c
        return c
    }

    /// Appends `record` to `w`, framed, and counts it.
    func frame(_ record: R, into w: inout SpillWriter) {
        appendFramed(record, into: &w, scratch: &scratch, key: &scratchKey)
        spilledRecords += 1
    }

    /// Writes the framed records of `w` to `file` as one block, compressed with this reducer's codec, and empties
    /// `w`.
    func write(_ w: inout SpillWriter, to file: SpillAppender) throws(HistoryError) {
        spilledBytes += Int64(try file.append(w.bytes, using: try codec()))
        w.bytes.removeAll(keepingCapacity: true)
    }

    /// A new work file's path.
    func nextWorkName() -> String {
        workCounter += 1
        return workDirectory + "/" + prefix + "\(workCounter).run"
    }

    /// Merges the records of `files` and `held` by key and writes them sorted as one run; when they do not fit the
    /// budget, splits them into sub-partitions by another hash seed first. Work files among `files` are removed.
    func reducePartition(
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
        try writeRun(replacing: files, into: &runs) { w, run throws(HistoryError) in
            for i in R.rowOrder(held) {
                frame(held[Int(i)], into: &w)
                if w.bytes.count >= SpillFormat.blockBytes { try write(&w, to: run) }
            }
        }
    }

    /// Writes one sorted run with `fill` (given the framed records' buffer and the run file), adds it to `runs`,
    /// and removes the work files among `files`.
    private func writeRun(
        replacing files: [String], into runs: inout [String],
        _ fill: (inout SpillWriter, SpillAppender) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        let run = try SpillAppender(path: nextWorkName(), codec: try codec(), bufferBytes: 256 << 10)
        var w = SpillWriter()
        try fill(&w, run)
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
        try writeRun(replacing: files, into: &runs) { w, run throws(HistoryError) in
            try table.sorted { r throws(HistoryError) in
                framed(r, into: &w)
                if w.bytes.count >= SpillFormat.blockBytes { try write(&w, to: run) }
            }
        }
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
}
