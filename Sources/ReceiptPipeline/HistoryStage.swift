import Dispatch
import Foundation
import ReceiptHistory
import ReceiptModel

/// The history stage of a run: a thread of its own that adds each written batch's occurrences to the
/// `HistoryCollector`, in the order the writer hands the batches over, so that the sink encodes one batch while
/// the history merges an earlier one.
///
/// The writer gives a batch up after writing it; the stage gives it back (`release`) once its occurrences are
/// added, so a batch returns to the pool only when both are done. After a failure or a cancellation (`stopped`)
/// the stage adds nothing more and only releases what it is handed. The collector is used by one thread at a
/// time: this one while batches are queued, the writer only after `waitForAll` or `close`.
final class HistoryStage: @unchecked Sendable {
    private let collector: HistoryCollector
    private let release: (consuming ColumnBatch) -> Void
    private let stopped: () -> Bool
    private let fail: (HistoryError) -> Void
    private let condition = NSCondition()
    /// Handed over and not yet taken; a taken slot is emptied, so the stage holds the only copy of a batch.
    private var queued: [(batch: ColumnBatch, input: Int)?] = []
    private var head = 0
    private var closed = false
    /// Batches handed over, and batches added (or skipped) and released.
    private var handed = 0
    private var done = 0
    private let thread = DispatchGroup()

    /// Starts the stage's thread.
    /// - Parameters:
    ///   - release: given each batch once its occurrences are added (or skipped); called on the stage's thread.
    ///   - stopped: whether the run failed or was cancelled: the remaining batches are released unadded.
    ///   - fail: told the first error of `HistoryCollector.add`; the stage then adds nothing more.
    init(
        _ collector: HistoryCollector, release: @escaping (consuming ColumnBatch) -> Void,
        stopped: @escaping () -> Bool, fail: @escaping (HistoryError) -> Void
    ) {
        self.collector = collector
        self.release = release
        self.stopped = stopped
        self.fail = fail
        DispatchQueue(label: "receiptflow.history").async(group: thread) { [self] in loop() }
    }

    /// Hands over a written batch whose input has command-line index `input`.
    func add(_ batch: consuming ColumnBatch, input: Int) {
        condition.lock()
        queued.append((batch, input))
        handed += 1
        condition.signal()
        condition.unlock()
    }

    /// Blocks until every batch handed over so far is added (or skipped) and released.
    func waitForAll() {
        condition.lock()
        while done < handed { condition.wait() }
        condition.unlock()
    }

    /// No more batches: the stage finishes what it holds, then its thread ends; returns once it has.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
        thread.wait()
    }

    private func loop() {
        var failed = false
        while let (batch, input) = next() {
            if !failed && !stopped() {
                do throws(HistoryError) {
                    try collector.add(batch, input: input)
                } catch {
                    failed = true
                    fail(error)
                }
            }
            release(consume batch)
            condition.lock()
            done += 1
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The next batch in order, or nil once the stage is closed and drained.
    private func next() -> (batch: ColumnBatch, input: Int)? {
        condition.lock()
        defer { condition.unlock() }
        while head == queued.count && !closed { condition.wait() }
        guard head < queued.count else { return nil }
        let item = queued[head].take()
        head += 1
        if head == queued.count {
            queued.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }
}
