import Foundation

/// A FIFO handing work from one stage to the next; `pop` blocks until an item arrives or the queue is closed.
/// Its length is bounded by the run's in-flight semaphore, not here.
final class WorkQueue<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [T] = []
    private var head = 0
    private var closed = false

    func push(_ item: T) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    /// The next item, or nil once the queue is closed and drained.
    func pop() -> T? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && !closed { condition.wait() }
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        // Compact once the consumed prefix dominates, keeping the array's capacity.
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }

    /// No more items: consumers drain what is queued, then get nil.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Finished batches waiting for their turn: workers finish out of order, the writer takes them by sequence.
final class ReorderBuffer<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [Int: T] = [:]
    private var stopped = false
    /// Set by the reader when it is done: the number of batches of the run.
    private var total: Int? = nil

    func put(_ sequence: Int, _ item: T) {
        condition.lock()
        waiting[sequence] = item
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until batch `sequence` is there (returns it), or returns nil when the run stops or has no such batch.
    func take(_ sequence: Int) -> T? {
        condition.lock()
        defer { condition.unlock() }
        while waiting[sequence] == nil && !stopped && (total.map { sequence < $0 } ?? true) { condition.wait() }
        return stopped ? nil : waiting.removeValue(forKey: sequence)
    }

    /// The reader produced `count` batches in all.
    func end(at count: Int) {
        condition.lock()
        total = count
        condition.broadcast()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Reusable objects (batch buffers, column batches): taken and given back, never freed during a run, so the
/// steady state allocates nothing per batch.
final class Pool<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var free: [T]
    private let make: () -> T

    init(make: @escaping () -> T) {
        free = []
        self.make = make
    }

    func take() -> T {
        lock.lock()
        let item = free.popLast()
        lock.unlock()
        // The in-flight semaphore keeps the pool from running dry; creating one is only a fallback.
        return item ?? make()
    }

    func give(_ item: T) {
        lock.lock()
        free.append(item)
        lock.unlock()
    }
}
