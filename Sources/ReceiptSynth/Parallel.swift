import Dispatch

/// Result slots filled by concurrent iterations; each iteration writes only its own index, so no lock is needed.
private final class Slots<T>: @unchecked Sendable {
    var values: [T?]
    init(_ n: Int) { values = [T?](repeating: nil, count: n) }
}

/// Runs `body(i)` for `0..<count` on all cores and returns the results in index order.
func parallelMap<T>(_ count: Int, _ body: (Int) -> T) -> [T] {
    let slots = Slots<T>(count)
    withoutActuallyEscaping(body) { body in
        // The closure is used only inside concurrentPerform, which returns after every iteration has finished.
        nonisolated(unsafe) let body = body
        slots.values.withUnsafeMutableBufferPointer { buf in
            nonisolated(unsafe) let buf = buf
            DispatchQueue.concurrentPerform(iterations: count) { i in buf[i] = body(i) }
        }
    }
    return slots.values.map { $0! }
}
