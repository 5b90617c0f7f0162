import Testing

@testable import ReceiptHistory

/// Collects what a queue processed (touched only on the queue, read after `wait`).
private final class Seen: @unchecked Sendable {
    var chunks: [[Int]] = []
}

struct HistoryWriteQueueTests {
    @Test func chunksAreProcessedInTheOrderTheyWereHandedOver() throws {
        let seen = Seen()
        let queue = HistoryWriteQueue<[Int]>(label: "test", depth: 2, make: { [] }) { chunk throws(HistoryError) in
            seen.chunks.append(chunk)
            chunk.removeAll(keepingCapacity: true)
        }
        var chunk: [Int] = []
        for i in 0..<100 {
            chunk.append(i)
            if chunk.count == 7 { try queue.hand(&chunk) }
            #expect(chunk.count < 7)
        }
        try queue.hand(&chunk)
        try queue.wait()
        #expect(seen.chunks.flatMap { $0 } == Array(0..<100))
        #expect(seen.chunks.count == 15)
    }

    @Test func theChunkHandedBackIsEmptyAndReused() throws {
        let queue = HistoryWriteQueue<[Int]>(label: "test", depth: 1, make: { [] }) { chunk throws(HistoryError) in
            chunk.removeAll(keepingCapacity: true)
        }
        var chunk = Array(repeating: 1, count: 1000)
        try queue.hand(&chunk)
        #expect(chunk.isEmpty)
        chunk = [2]
        try queue.hand(&chunk)
        // With one chunk in flight at most, the second hand waited for the first to come back, emptied.
        #expect(chunk.isEmpty && chunk.capacity >= 1000)
        try queue.wait()
    }

    @Test func aFailureIsThrownAndTheChunksAfterItAreDropped() {
        let seen = Seen()
        let queue = HistoryWriteQueue<[Int]>(label: "test", depth: 1, make: { [] }) { chunk throws(HistoryError) in
            if chunk == [3] { throw HistoryError("chunk 3 cannot be written") }
            seen.chunks.append(chunk)
            chunk.removeAll()
        }
        var thrown: HistoryError? = nil
        do throws(HistoryError) {
            for i in 0..<10 {
                var chunk = [i]
                try queue.hand(&chunk)
            }
            try queue.wait()
        } catch {
            thrown = error
        }
        queue.settle()
        #expect(thrown?.message.contains("chunk 3") == true)
        #expect(seen.chunks == [[0], [1], [2]])
        #expect(throws: HistoryError.self) { try queue.wait() }
    }
}
