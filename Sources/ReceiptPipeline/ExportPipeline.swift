import Dispatch
import Foundation
import ReceiptHistory
import ReceiptIO
import ReceiptModel
import ReceiptSink
import ReceiptVerify
import Synchronization

/// How a run ended.
public enum RunOutcome: Sendable {
    /// Every record was written and the sink finished (files under their final names).
    case completed(RunResult)
    /// Input or output failed; the sink was aborted. The failure's message says what to do.
    case failed(RunFailure, RunResult)
    /// `cancel()` (SIGINT) stopped the run; the sink was aborted.
    case cancelled(RunResult)
}

/// Why a run stopped before its end: an input that could not be read, or output (the history tables included)
/// that could not be written.
public enum RunFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case input(InputError)
    case output(SinkError)

    /// What failed and what to do, for the user.
    public var message: String {
        switch self {
        case .input(let e): return e.message
        case .output(let e): return e.message
        }
    }

    public var description: String { message }
}

/// Totals of a run, for `summary.json` and the final progress line.
public struct RunResult: Sendable {
    public var counts = BatchCounts()
    public var elapsedSeconds: Double = 0
    public var chainCacheHits = 0
    public var chainCacheMisses = 0
    /// Sum of the input file sizes when all are known (regular files), for percentages.
    public var inputSize: Int? = nil
    /// What the run is doing now, for the progress line.
    public var phase = RunPhase.records
    /// Whether the run has a history step (so that the progress line can number the steps).
    public var hasHistory = false
    public init() {}
}

/// The steps of a run, in order: the records (read, verified and written), then the purchase history merged across
/// all of them (when written), then the output files finished.
public enum RunPhase: Sendable, Equatable {
    case records
    case history
    case finishing
}

/// `receiptflow export` as stages: one reader thread cuts inputs into `RecordBatch`es, N workers turn them into
/// `ColumnBatch`es with their own `RecordProcessor`, and the calling thread writes them to the sink in input
/// order, handing each written batch to the history stage (a thread of its own). A counting semaphore bounds
/// batches read but not yet written and added, so memory does not grow with the input.
public final class ExportPipeline: @unchecked Sendable {
    public let config: PipelineConfig
    private let sink: BatchSink
    private let checkpoint: BatchCheckpoint?
    private let history: HistoryCollector?
    private let finishHistory: (() throws(HistoryError) -> Void)?
    private let cache: ChainCache?
    private let cancelled = Atomic<Bool>(false)
    /// Guards `failure` and `live`, which the reader, the workers and the writer share (a pthread mutex, which
    /// ThreadSanitizer sees order the accesses).
    private let lock = Lock()
    private var failure: RunFailure? = nil
    private var live = RunResult()
    private let work = WorkQueue<RecordBatch>()
    private let finished = ReorderBuffer<(ColumnBatch, BatchCounts, InputPosition)>()

    /// - Parameters:
    ///   - cache: the shared chain cache; required unless `config.verify` is false.
    ///   - checkpoint: told where each written batch ends in the input (a resumable run's output).
    ///   - history: given every written batch in input order, on a `HistoryStage` thread of its own (a part is
    ///     committed only once the occurrences of all its batches are added).
    ///   - finishHistory: run when the input is done, before the sink finishes (writes the history tables); a
    ///     resumable run finishes its history when it commits the last part instead.
    public init(
        config: PipelineConfig, sink: BatchSink, cache: ChainCache?, checkpoint: BatchCheckpoint? = nil,
        history: HistoryCollector? = nil, finishHistory: (() throws(HistoryError) -> Void)? = nil
    ) {
        precondition(config.threads >= 1)
        precondition(!config.verify || cache != nil, "verification needs a chain cache")
        self.config = config
        self.sink = sink
        self.checkpoint = checkpoint
        self.history = history
        self.finishHistory = finishHistory
        self.cache = cache
    }

    /// Stops reading, discards work in flight and makes `run` abort the sink. Safe from any thread.
    public func cancel() {
        cancelled.store(true, ordering: .sequentiallyConsistent)
        work.close()
        finished.stop()
    }

    /// Totals so far (for the progress line); safe from any thread.
    public var progress: RunResult { lock.withLock { live } }

    /// Runs to the end (or failure, or cancellation). Writes happen on the calling thread.
    public func run() -> RunOutcome {
        let start = ContinuousClock.now
        func result() -> RunResult {
            var r = lock.withLock { live }
            let e = ContinuousClock.now - start
            r.elapsedSeconds = Double(e.components.seconds) + Double(e.components.attoseconds) * 1e-18
            r.chainCacheHits = cache?.hits ?? 0
            r.chainCacheMisses = cache?.misses ?? 0
            return r
        }

        // Check every input first: a missing file stops the run before any work (and any output) is done.
        // Each is opened only when its turn comes, so that thousands of inputs do not exhaust descriptors.
        var sizes: [Int?] = []
        for path in config.inputs {
            do throws(InputError) {
                sizes.append(try InputOpener.probe(path))
            } catch {
                sink.abort()
                return .failed(.input(error), result())
            }
        }
        let inputSize = sizes.contains { $0 == nil } ? nil : sizes.reduce(0) { $0 + $1! }
        lock.withLock {
            live.inputSize = inputSize
            live.hasHistory = history != nil
        }

        // Created at 0 and raised: libdispatch traps when a semaphore is freed below its initial value, which a
        // failed or cancelled run (slots still taken) would otherwise do.
        let slots = DispatchSemaphore(value: 0)
        for _ in 0..<config.effectiveInFlight { slots.signal() }
        let batches = Pool { [config] in
            RecordBatch(capacity: config.reader.batchCapacity, maxRecords: config.reader.maxRecordsPerBatch)
        }
        // Without a history stage the workers make no history feed.
        let columns = Pool { [history] in
            var b = ColumnBatch(sequence: 0)
            b.history = HistoryFeed(collecting: history != nil)
            return b
        }
        let workers = DispatchGroup()
        let reader = DispatchGroup()
        DispatchQueue(label: "receiptflow.reader").async(group: reader) { [self] in read(slots, batches) }
        // Every way out joins the reader and the workers before the sink finishes or aborts: no thread of the
        // run outlives `run` (a thread still running while the process exits can touch freed globals).
        func join() {
            workers.wait()
            // A reader blocked reading a pipe whose writer is silent notices the cancellation only when the read
            // returns; it holds no output, so it is not waited for longer than this.
            _ = reader.wait(timeout: .now() + .seconds(5))
        }
        for k in 0..<config.threads {
            // A serial queue of its own gives each worker a thread that may block on the work queue.
            DispatchQueue(label: "receiptflow.worker.\(k)").async(group: workers) { [self] in
                work(batches, columns)
            }
        }

        // The writer: batches in sequence order, each slot released once its batch is written and its
        // occurrences are added to the history, which runs on a stage of its own.
        let stage = history.map { history in
            HistoryStage(
                history,
                release: { (batch: consuming ColumnBatch) in
                    columns.give(batch)
                    slots.signal()
                },
                stopped: { [self] in cancelled.load(ordering: .relaxed) },
                fail: { [self] error in fail(.output(SinkError(error))) })
        }
        var next = 0
        while let (batch, counts, end) = finished.take(next) {
            if cancelled.load(ordering: .relaxed) { break }
            do throws(SinkError) {
                try sink.write(batch)
                if let stage {
                    // A part is committed only with the occurrences of every batch in it.
                    let commits = checkpoint?.commitsPart ?? false
                    stage.add(consume batch, input: end.source)
                    if commits {
                        stage.waitForAll()
                        if cancelled.load(ordering: .sequentiallyConsistent) { break }
                    }
                    try checkpoint?.batchWritten(counts, end: end)
                } else {
                    try checkpoint?.batchWritten(counts, end: end)
                    // Moved, not copied: a worker that takes it next must find its buffers unshared, or clearing
                    // them would allocate new ones (copy on write).
                    columns.give(consume batch)
                    slots.signal()
                }
            } catch {
                fail(.output(error))
                break
            }
            lock.withLock { live.counts.add(counts) }
            next += 1
        }
        // The history stage ends before anything else: a failure of its last batches stops the run too.
        stage?.close()

        if let stopped = lock.withLock({ failure }) {
            cancel()
            join()
            sink.abort()
            return .failed(stopped, result())
        }
        if cancelled.load(ordering: .sequentiallyConsistent) {
            join()
            sink.abort()
            return .cancelled(result())
        }
        join()
        // A resumable run merges its history when its sink commits the last part.
        lock.withLock { live.phase = history != nil ? .history : .finishing }
        if let finishHistory {
            do throws(HistoryError) {
                try finishHistory()
            } catch {
                sink.abort()
                return .failed(.output(SinkError(error)), result())
            }
            lock.withLock { live.phase = .finishing }
        }
        do throws(SinkError) {
            try sink.finish()
        } catch {
            sink.abort()
            return .failed(.output(error), result())
        }
        return .completed(result())
    }

    private func fail(_ stopped: RunFailure) {
        lock.withLock { if failure == nil { failure = stopped } }
        cancel()
    }

    // MARK: - Stages

    /// The reader thread: every input in order, one batch per free slot.
    private func read(_ slots: DispatchSemaphore, _ batches: Pool<RecordBatch>) {
        var sequence = 0
        defer {
            finished.end(at: sequence)
            work.close()
        }
        for (k, path) in config.inputs.enumerated() {
            // A resumed run does not open the inputs its committed parts cover entirely.
            if let resume = config.resumeAfter, k < resume.source { continue }
            let reader: RecordReader
            do throws(InputError) {
                var options = config.reader
                options.rejectsUnreadableContent = true
                // A first line naming the receipt field (`--field`, or a default name) makes the input CSV.
                options.csvReceiptFields = config.field.map { [$0] } ?? NDJSONScanner.defaultFields
                reader = try RecordReader.open(path, name: config.sourceName(path), sourceIndex: k, options: options)
            } catch {
                fail(.input(error))
                return
            }
            if let resume = config.resumeAfter, k == resume.source { reader.skipThroughLine = resume.line }
            while true {
                // Wait for a slot, checking now and then whether the run was cancelled meanwhile.
                while slots.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
                    if cancelled.load(ordering: .relaxed) { return }
                }
                if cancelled.load(ordering: .relaxed) { return }
                let batch = batches.take()
                let more: Bool
                do throws(InputError) {
                    more = try reader.fill(batch)
                } catch {
                    batches.give(batch)
                    fail(.input(error))
                    return
                }
                guard more else {
                    batches.give(batch)
                    slots.signal()
                    break
                }
                batch.sequence = sequence
                sequence += 1
                work.push(batch)
            }
        }
    }

    /// A worker thread: its own processor, batches from the queue, results to the reorder buffer.
    private func work(_ batches: Pool<RecordBatch>, _ columns: Pool<ColumnBatch>) {
        let processor = RecordProcessor(config: config, cache: cache)
        var counts = BatchCounts()
        while let batch = work.pop() {
            if cancelled.load(ordering: .relaxed) {
                batches.give(batch)
                continue
            }
            var out = columns.take()
            processor.process(batch, into: &out, counts: &counts)
            let sequence = batch.sequence
            let end = InputPosition(source: batch.sourceIndex, line: batch.endLine)
            batches.give(batch)
            finished.put(sequence, (consume out, counts, end))
        }
    }
}
