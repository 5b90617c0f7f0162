import Dispatch
import ReceiptModel

/// Does the slow part of one output of the history's end (encoding a table's chunk of rows into its file,
/// compressing the state's blocks, building the subscriptions from the periods) on a serial queue of its own, so
/// that the merge goes on meanwhile.
///
/// Chunks are handed over in order and processed in that order. At most `depth` chunks are in flight: `hand` waits
/// for one to come back first, so memory stays bounded. The chunk handed back in exchange is an emptied one that
/// came back from the queue (or a new one from `make`), so buffers are reused.
///
/// A failure is kept: the chunks after it are dropped, and `hand` and `wait` throw it. Nothing else may touch what
/// `process` uses until `wait` (or `settle`) returns.
final class HistoryWriteQueue<Chunk>: @unchecked Sendable {
    /// A chunk on its way through the queue (a class, so that the chunk stays uniquely held and is emptied in
    /// place).
    private final class Slot: @unchecked Sendable {
        var chunk: Chunk
        init(_ chunk: Chunk) { self.chunk = chunk }
    }

    private let queue: DispatchQueue
    private let group = DispatchGroup()
    private let slots: DispatchSemaphore
    private let make: () -> Chunk
    private let process: (inout Chunk) throws(HistoryError) -> Void
    private let lock = Lock()
    // Guarded by `lock`.
    private var spare: [Slot] = []
    private var failure: HistoryError? = nil

    /// - Parameters:
    ///   - process: writes (or otherwise consumes) a chunk on the queue and leaves it empty for reuse.
    init(
        label: String, depth: Int = 2, make: @escaping () -> Chunk,
        process: @escaping (inout Chunk) throws(HistoryError) -> Void
    ) {
        queue = DispatchQueue(label: "receiptflow.history." + label)
        slots = DispatchSemaphore(value: max(1, depth))
        self.make = make
        self.process = process
    }

    /// The first failure of a chunk so far.
    private func check() throws(HistoryError) {
        if let f = lock.withLock({ failure }) { throw f }
    }

    /// Queues `chunk` and puts an empty one in its place; throws a failure of an earlier chunk.
    func hand(_ chunk: inout Chunk) throws(HistoryError) {
        try check()
        slots.wait()
        let slot = lock.withLock { spare.popLast() } ?? Slot(make())
        swap(&slot.chunk, &chunk)
        group.enter()
        queue.async { [self] in
            if lock.withLock({ failure == nil }) {
                do throws(HistoryError) {
                    try process(&slot.chunk)
                } catch {
                    lock.withLock { if failure == nil { failure = error } }
                }
            }
            lock.withLock { spare.append(slot) }
            slots.signal()
            group.leave()
        }
    }

    /// Waits until every chunk handed over is processed; throws the first failure.
    func wait() throws(HistoryError) {
        group.wait()
        try check()
    }

    /// Waits until the queue is idle, whatever happened (before the outputs are discarded).
    func settle() { group.wait() }
}
