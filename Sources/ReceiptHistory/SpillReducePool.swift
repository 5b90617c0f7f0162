import Dispatch
import ReceiptModel

/// Hands out the items of a parallel reduce one at a time and keeps the failures; after the first failure it
/// hands out no more.
private final class ReduceQueue: @unchecked Sendable {
    private let lock = Lock()
    private let count: Int
    private var next = 0
    private var failures: [(item: Int, error: HistoryError)] = []

    init(count: Int) { self.count = count }

    func take() -> Int? {
        lock.withLock {
            guard failures.isEmpty, next < count else { return nil }
            next += 1
            return next - 1
        }
    }

    func fail(_ item: Int, _ error: HistoryError) { lock.withLock { failures.append((item, error)) } }

    /// The failure of the lowest item, if any.
    var firstFailure: HistoryError? { lock.withLock { failures.min { $0.item < $1.item }?.error } }
}

/// Runs `body(worker, item)` for every item of `0..<count` on `workers` threads, each taking the next item when it
/// is done with one; `worker` (in `0..<workers`) tells which thread runs it, so that each can use state of its own.
/// Returns when every thread has finished. A failure stops the others from taking new items (those under way
/// finish) and is thrown once all have returned: the failure of the lowest item when several fail.
func reduceInParallel(
    _ count: Int, workers: Int, _ body: (_ worker: Int, _ item: Int) throws(HistoryError) -> Void
) throws(HistoryError) {
    if workers <= 1 {
        for i in 0..<count { try body(0, i) }
        return
    }
    let queue = ReduceQueue(count: count)
    withoutActuallyEscaping(body) { body in
        // The closure is used only inside concurrentPerform, which returns after every iteration has finished;
        // each worker index runs on one thread at a time, so `body`'s per-worker state is never shared.
        nonisolated(unsafe) let body = body
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            while let item = queue.take() {
                do throws(HistoryError) {
                    try body(worker, item)
                } catch {
                    queue.fail(item, error)
                }
            }
        }
    }
    if let error = queue.firstFailure { throw error }
}
