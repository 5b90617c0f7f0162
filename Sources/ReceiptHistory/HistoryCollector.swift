import Foundation
import ReceiptModel
import ReceiptSink

/// What the history stage wrote.
public struct HistoryResult: Sendable {
    /// The as-of time used for `state` (epoch ms); nil when no receipt contributed and none was given.
    public var asOf: Int64?
    public var purchases: Int64 = 0
    public var subscriptions: Int64 = 0
    public var events: Int64 = 0
    public var daily: Int64 = 0
    /// Bytes written to spill files over the run (0 when everything fit in memory).
    public var spilledBytes: Int64 = 0
    /// Of those, the purchases' bytes, and how many purchase records they hold (a record counts each time it is
    /// written: to a segment, a re-partition, a sorted run).
    public var spilledPurchaseBytes: Int64 = 0
    public var spilledPurchaseRecords: Int64 = 0
    /// Rows of `subscriptions` by their `state`.
    public var subscriptionsByState: [String: Int64] = [:]
    /// Bytes of the history state written for a later run (`HistoryStateFormat`).
    public var stateBytes: Int64 = 0
}

/// The history stage: collects one occurrence per in-app entry of every contributing receipt of the written
/// batches, and the newest counting renewal info per key, in bounded memory (spilling to a hidden folder inside the
/// output directory), and at the end writes `purchases.<ext>`, `subscriptions.<ext>`, `events.<ext>` and
/// `daily.<ext>` as docs/history.md defines them.
///
/// Used from one thread at a time (the export's history stage, then the writer to seal parts and finish). The rows
/// depend only on the inputs and their positions: merges are order-independent and the tables are written in a fixed
/// row order and fixed chunks.
public final class HistoryCollector {
    /// The spill folder of a resumable run, inside the output directory; its `part-NNNNN` folders are committed
    /// with the parts.
    public static let resumableFolder = ".receiptflow-history"
    /// Default memory for merging occurrences (the subscriptions merge takes a quarter more).
    public static let defaultMemoryBudget = 192 << 20
    /// Environment variable overriding the memory budget in bytes; for tests that must exercise the spill.
    public static let memoryVariable = "RECEIPTFLOW_HISTORY_MEMORY"

    public let directory: String
    /// The names of the chain's inputs (the `source` column): a base's, then this run's.
    public let inputs: [String]
    /// The spill root (removed by `removeSpill`).
    public let spillRoot: String
    private let budget: Int
    private let resumable: Bool
    /// Greatest creation date of the contributing records seen (the data horizon).
    var horizon: Int64? = nil
    /// Purchases merged in memory, spilled to `purchases` when they exceed the budget.
    private var table: PurchaseTable
    let purchases: SpillStore<PurchaseRecord>
    /// The newest counting renewal info per (environment, original_transaction_id).
    let renewals: SpillStore<RenewalRecord>
    /// The history states this run continues (`continueChain`, `mergeChains`), each with the index in `inputs`
    /// of its first input, merged in by `finish`.
    var bases: [(state: HistoryStateFile, offset: Int)] = []
    /// Index in `inputs` of this run's first input: the bases' input count.
    var inputOffset = 0
    /// The number of runs the bases stand for, and whether this run reads inputs of its own (a merge does not).
    var runsBefore: Int64 = 0
    var ownRun = true
    /// Whether this run's own records were merged without being verified (`--no-verify`); the state it writes says
    /// so, and so does every state of a chain that continues it.
    public var ownRecordsUnverified = false
    /// How many threads a large spill is written on and `finish` reduces spilled partitions on (each with a share
    /// of the memory budget); the tables are the same whatever the number.
    public var threads = 1 {
        didSet {
            purchases.threads = threads
            renewals.threads = threads
        }
    }

    /// - Parameters:
    ///   - directory: the output directory (the spill goes inside it).
    ///   - inputs: the inputs as named on the command line (the `source` column); on a base, the base's inputs
    ///     (`HistoryStateHeader.inputs`) first.
    ///   - resumable: a parts run: the spill lives in `resumableFolder` and is sealed per part.
    public init(directory: String, inputs: [String], resumable: Bool, memoryBudget: Int? = nil) {
        self.directory = directory
        self.inputs = inputs
        self.resumable = resumable
        budget = memoryBudget ?? Self.budgetFromEnvironment ?? Self.defaultMemoryBudget
        table = PurchaseTable(budget: budget)
        let pid = getpid()
        spillRoot = Self.join(directory, resumable ? Self.resumableFolder : ".receiptflow-history-\(pid)")
        purchases = SpillStore(
            segment: Self.join(spillRoot, ".segment-\(pid)"), workDirectory: Self.join(spillRoot, ".work-\(pid)"),
            budget: budget)
        renewals = SpillStore(
            segment: Self.join(spillRoot, ".renewals-\(pid)"),
            workDirectory: Self.join(spillRoot, ".renewals-work-\(pid)"),
            budget: budget / 8)
    }

    static var budgetFromEnvironment: Int? {
        ProcessInfo.processInfo.environment[memoryVariable].flatMap { Int($0) }
    }

    static func join(_ d: String, _ n: String) -> String { d.hasSuffix("/") ? d + n : d + "/" + n }

    /// Adds the occurrences of one written batch (its `history` feed); `input` is the command-line index of the
    /// batch's input.
    public func add(_ batch: ColumnBatch, input local: Int) throws(HistoryError) {
        let input = local + inputOffset
        let feed = batch.history
        if let h = feed.horizon { horizon = max(horizon ?? h, h) }
        // Whole runs of occurrences between spills, each read in place, a group at a time: the group's table
        // memory is read first (`warm`), so that its cache misses overlap.
        var next = 0
        var hashes = [UInt64](repeating: 0, count: Self.warmGroup)
        while next < feed.purchases.count {
            feed.text.withUnsafeBytes { text in
                feed.purchases.withUnsafeBufferPointer { all in
                    while next < all.count {
                        let end = min(next + Self.warmGroup, all.count)
                        hashes.withUnsafeMutableBufferPointer { h in
                            for i in next..<end { h[i - next] = all[i].keyHash }
                            table.warm(UnsafeBufferPointer(rebasing: h[0..<(end - next)]))
                        }
                        while next < end {
                            let o = all[next]
                            table.add(o, input: input, text: UnsafeRawBufferPointer(rebasing: text[o.text]))
                            next += 1
                            if table.bytes > purchases.budget { return }
                        }
                    }
                }
            }
            if table.bytes > purchases.budget {
                let purchases = self.purchases
                try table.drainColdest { records throws(HistoryError) in try purchases.spill(records) }
            }
        }
        for n in feed.renewals {
            try renewals.add(feed.text.withUnsafeBytes { RenewalRecord(n, input: input, text: $0) })
        }
    }

    /// Occurrences whose table memory `add` reads ahead at once.
    static let warmGroup = 16

    /// Writes what the table holds to the purchases' spill and empties it.
    private func spillTable() throws(HistoryError) {
        let purchases = self.purchases
        try table.drain { records throws(HistoryError) in try purchases.spill(records) }
    }

    // MARK: - Resumable runs

    /// The relative path of part `index`'s spill folder.
    public static func partFolder(_ index: Int) -> String {
        let digits = String(index)
        return resumableFolder + "/part-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }

    /// Seals the occurrences collected since the last part into part `index`'s folder (synced, renamed into
    /// place) before the part is listed in the manifest. Returns the folder relative to the output directory.
    public func sealPart(_ index: Int) throws(HistoryError) -> String {
        let relative = Self.partFolder(index)
        let final = Self.join(directory, relative)
        try makeDirectory(spillRoot)
        try spillTable()
        try writeHorizon(into: purchasesSegmentPath)
        try writeFormat(into: purchasesSegmentPath)
        try purchases.seal(as: final, next: purchasesSegmentPath)
        try renewals.seal(as: Self.join(final, Self.renewalsFolder), next: renewalsSegmentPath)
        return relative
    }

    /// A part folder's subfolder holding the part's renewal infos.
    static let renewalsFolder = "renewals"

    private var purchasesSegmentPath: String { Self.join(spillRoot, ".segment-\(getpid())") }
    private var renewalsSegmentPath: String { Self.join(spillRoot, ".renewals-\(getpid())") }

    private func writeHorizon(into folder: String) throws(HistoryError) {
        try makeDirectory(folder)
        let text = horizon.map(String.init) ?? "none"
        guard FileManager.default.createFile(atPath: Self.join(folder, "horizon"), contents: Data(text.utf8)) else {
            throw HistoryError.system("cannot write", Self.join(folder, "horizon"))
        }
    }

    private func writeFormat(into folder: String) throws(HistoryError) {
        let path = Self.join(folder, SpillFormat.versionFile)
        guard FileManager.default.createFile(atPath: path, contents: Data(SpillFormat.version.utf8)) else {
            throw HistoryError.system("cannot write", path)
        }
    }

    /// Takes in the spill of a part committed by an earlier attempt (`relative` as `sealPart` returned it). A
    /// spill in another layout than this build's (written by another build of receiptflow) is refused.
    public func adoptPart(_ relative: String) throws(HistoryError) {
        let folder = Self.join(directory, relative)
        if FileManager.default.fileExists(atPath: Self.join(folder, "horizon")) {
            let format = FileManager.default.contents(atPath: Self.join(folder, SpillFormat.versionFile))
                .flatMap { String(data: $0, encoding: .utf8) }
            guard format == SpillFormat.version else {
                throw HistoryError(
                    "\(folder) holds a history spill written by another build of receiptflow ("
                        + (format.map { "'\($0)'" } ?? "no format named") + ", this build reads '"
                        + SpillFormat.version + "'); resume with the receiptflow that began the run, or remove "
                        + "the output directory and export again")
            }
        }
        guard let data = FileManager.default.contents(atPath: Self.join(folder, "horizon")),
            let text = String(data: data, encoding: .utf8)
        else {
            throw HistoryError(
                "\(folder) is listed in the manifest but its history spill is missing; remove the output directory "
                    + "and export again")
        }
        if let h = Int64(text) { horizon = max(horizon ?? h, h) }
        purchases.adopt(folder)
        let renewalFolder = Self.join(folder, Self.renewalsFolder)
        if FileManager.default.fileExists(atPath: renewalFolder) { renewals.adopt(renewalFolder) }
    }

    /// Removes spill folders no committed part lists (left by an attempt that stopped), keeping `committed`.
    public func removeUncommitted(keeping committed: Set<String>) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: spillRoot)) ?? []
        for name in names where !committed.contains(Self.resumableFolder + "/" + name) {
            try? FileManager.default.removeItem(atPath: Self.join(spillRoot, name))
        }
    }

    // MARK: - The end

    /// Merges everything and writes the four tables (temporary names, renamed at the end, or staged in `unit` to
    /// become visible with the rest of the run; on failure none is left). `asOf` defaults to the data horizon.
    ///
    /// The purchases come out of their merge in row order; their periods are put in subscription and rank order
    /// as they come (`PeriodStream`, which falls back to a second store keyed by subscription and rank), so that
    /// each subscription's periods come together in rank order, to give its `subscriptions` row, its `events`
    /// rows and its changes to the `daily` counts. That subscriptions pass runs on a queue of its own, fed batches
    /// of purchases, and each table's chunks and the state's blocks are encoded on queues of their own
    /// (`HistoryWriteQueue`), so that the merge never waits for them; the files are finished and committed in the
    /// same order whatever the timing.
    public func finish(
        asOf: Int64?, format: OutputFormat, metadata: RunMetadata, options: SinkOptions = SinkOptions(),
        unit: CommitUnit? = nil
    ) throws(HistoryError) -> HistoryResult {
        var result = HistoryResult()
        var stateWriter: HistoryStateWriter? = nil
        let a = asOf ?? horizon
        result.asOf = a
        let pid = getpid()
        let periods = SpillStore<PeriodRecord>(
            segment: Self.join(spillRoot, ".subscriptions-\(pid)"),
            workDirectory: Self.join(spillRoot, ".subscriptions-work-\(pid)"), budget: max(budget / 4, 1 << 20))
        periods.threads = threads
        var buffers: [HistoryTableBuffer] = []
        do throws(SinkError) {
            for schema in Self.tables {
                buffers.append(
                    HistoryTableBuffer(
                        schema: schema,
                        writer: try makeTableFileWriter(
                            format: format, schema: schema, directory: directory, metadata: metadata,
                            options: options, unit: unit)))
            }
        } catch {
            for b in buffers { b.writer.abort() }
            throw HistoryError(error)
        }
        var purchaseRows = buffers[0]
        let subscriptionRows = buffers[1]
        let eventRows = buffers[2]
        var dailyRows = buffers[3]
        buffers = []
        // The purchases with an expires_date go in batches to the subscriptions pass, on a queue of its own.
        var passQueue: HistoryWriteQueue<[PurchaseRecord]>? = nil
        do throws(HistoryError) {
            let inputs = self.inputs
            // The newest renewal info per key, held while the subscriptions are written (one per subscription at
            // most that matches, far fewer than purchases).
            var newestRenewal: [RenewalKey: RenewalRecord] = [:]
            try absorbBase()
            let state = try HistoryStateWriter(directory: directory, unit: unit, header: stateHeader)
            stateWriter = state
            try renewals.reduce { r throws(HistoryError) in
                try state.add(r)
                newestRenewal[r.key] = r
            }
            let subscriptions = SubscriptionPass(
                asOf: a, newestRenewal: newestRenewal, periods: periods, subscriptionRows: subscriptionRows,
                eventRows: eventRows)
            let queue = HistoryWriteQueue<[PurchaseRecord]>(label: "periods", depth: 3, make: { [] }) {
                batch throws(HistoryError) in
                for p in batch { try subscriptions.add(p) }
                batch.removeAll(keepingCapacity: true)
            }
            passQueue = queue
            var batch: [PurchaseRecord] = []
            func emit(_ p: PurchaseRecord) throws(HistoryError) {
                try state.add(p)
                try purchaseRows.append(p, inputs: inputs)
                if p.facts.expiresDate != nil {
                    batch.append(p)
                    if batch.count >= Self.periodBatch { try queue.hand(&batch) }
                }
            }
            if !purchases.hasSpilled && table.drainsInOrder {
                try table.drainInOrder(emit)
            } else {
                // Once the purchases have spilled, the table joins them on disk and lets its storage go, so that
                // it is not held beside the reduce's own tables; so does a compact table too large to be ordered
                // where it is.
                if purchases.hasSpilled || table.isCompact {
                    try spillTable()
                    table = PurchaseTable(budget: budget)
                }
                try purchases.reduce(pending: table.drain(), emit)
            }
            try purchaseRows.flush()
            if !batch.isEmpty { try queue.hand(&batch) }
            try queue.wait()
            try subscriptions.finish()
            try subscriptions.daily.rows(asOf: a) { day, product, counts throws(HistoryError) in
                try dailyRows.append(day: day, product: product, counts: counts)
            }
            try dailyRows.drain()
            try purchaseRows.drain()
            result.purchases = purchaseRows.rows
            result.subscriptions = subscriptions.subscriptionRows.rows
            result.events = subscriptions.eventRows.rows
            result.daily = dailyRows.rows
            result.subscriptionsByState = subscriptions.byState
            result.spilledBytes = purchases.spilledBytes + periods.spilledBytes + renewals.spilledBytes
            result.spilledPurchaseBytes = purchases.spilledBytes
            result.spilledPurchaseRecords = purchases.spilledRecords
            // The first table's name is the last to appear, so that a table under its final name means the others
            // are there too.
            var finished: [String] = []
            for b in [dailyRows, eventRows, subscriptionRows, purchaseRows] {
                do throws(SinkError) {
                    try b.writer.finish()
                    finished.append(b.writer.path)
                } catch {
                    // Renamed into place already, unless staged in `unit` (whose discard removes it; the final
                    // name may then hold an earlier run's table, which must stay).
                    if unit == nil { for path in finished { unlink(path) } }
                    throw HistoryError(error)
                }
            }
            do throws(HistoryError) {
                try state.commit()
            } catch {
                if unit == nil { for path in finished { unlink(path) } }
                throw error
            }
            result.stateBytes = state.bytesWritten
        } catch {
            // Nothing may be writing to a file when it is removed.
            passQueue?.settle()
            for b in [purchaseRows, subscriptionRows, eventRows, dailyRows] {
                b.settle()
                b.writer.abort()
            }
            stateWriter?.abort()
            throw error
        }
        return result
    }

    /// Purchases handed to the subscriptions pass at a time.
    static let periodBatch = 1024

    /// The history tables, in the order `finish` opens them.
    static let tables: [TableSchema] = [.purchases, .subscriptions, .events, .daily]

    /// Removes the spill folder (at the end of a run, and when a run fails or is interrupted; a resumable run
    /// keeps it until its last part is committed and the tables are written).
    public func removeSpill() {
        try? FileManager.default.removeItem(atPath: spillRoot)
    }

    /// Removes the tables `finish` wrote (when a later step of the run fails).
    public func removeTables(format: OutputFormat) {
        for s in Self.tables {
            unlink(Self.join(directory, "\(s.name).\(format.fileExtension)"))
        }
        unlink(Self.join(directory, HistoryStateFormat.fileName))
    }
}
