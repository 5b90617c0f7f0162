import Foundation
import ReceiptModel
import Testing

@testable import ReceiptHistory

/// The thread pool of a spill store's reduce: every item once, each worker's state used by one thread at a time,
/// and a failure that stops the rest and is thrown after every thread has returned.
@Suite struct SpillReducePoolTests {
    /// Counts, under a lock, how often each item ran and how many threads use each worker index at once.
    final class Tally: @unchecked Sendable {
        let lock = Lock()
        var runs: [Int]
        var busy: [Int]
        var overlaps = 0
        init(items: Int, workers: Int) {
            runs = Array(repeating: 0, count: items)
            busy = Array(repeating: 0, count: workers)
        }
        func enter(_ worker: Int, _ item: Int) {
            lock.withLock {
                runs[item] += 1
                busy[worker] += 1
                if busy[worker] > 1 { overlaps += 1 }
            }
        }
        func leave(_ worker: Int) { lock.withLock { busy[worker] -= 1 } }
    }

    @Test func everyItemRunsOnceAndEachWorkersStateOnOneThreadAtATime() throws {
        for workers in [1, 2, 3, 8] {
            let tally = Tally(items: 64, workers: workers)
            try reduceInParallel(64, workers: workers) { w, i throws(HistoryError) in
                tally.enter(w, i)
                usleep(200)
                tally.leave(w)
            }
            #expect(tally.runs == Array(repeating: 1, count: 64), "\(workers) workers")
            #expect(tally.overlaps == 0, "\(workers) workers")
        }
    }

    @Test func aFailureStopsTheOtherItemsAndIsThrownOnceEveryThreadHasReturned() throws {
        for workers in [1, 2, 4] {
            let tally = Tally(items: 64, workers: workers)
            do {
                try reduceInParallel(64, workers: workers) { w, i throws(HistoryError) in
                    tally.enter(w, i)
                    defer { tally.leave(w) }
                    usleep(200)
                    if i == 5 { throw HistoryError(.spillDamaged, path: "p-005.run", detail: "test") }
                }
                Issue.record("\(workers) workers: the failure was not thrown")
            } catch {
                #expect(error.code == .spillDamaged && error.path == "p-005.run", "\(workers) workers")
            }
            // No thread is still in an item, and items after the failure were mostly never started.
            #expect(tally.busy == Array(repeating: 0, count: workers), "\(workers) workers")
            #expect(tally.runs.reduce(0, +) < 64, "\(workers) workers")
            #expect(tally.runs.allSatisfy { $0 <= 1 }, "\(workers) workers")
        }
    }

    @Test func whenSeveralItemsFailTheLowestItemsFailureIsThrown() throws {
        do {
            try reduceInParallel(8, workers: 4) { _, i throws(HistoryError) in
                // Item 0 is taken first and fails last: the items taken meanwhile have failed before it.
                usleep(i < 4 ? 20_000 : 0)
                throw HistoryError(.other, detail: "item \(i)")
            }
            Issue.record("nothing was thrown")
        } catch {
            #expect(error.detail == "item 0")
        }
    }
}
