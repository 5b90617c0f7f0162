/// The recencies a purchase record keeps for the facts merged on their own (the cancellation pair, the user id,
/// the app account token), in storage of their own, since most purchases have none of them.
///
/// Shared between copies of a record and copied before a change when shared (`PurchaseRecord` checks it is the
/// only holder before writing), so that records keep value semantics: an instance another thread can see is never
/// written, which is what makes the `@unchecked Sendable` sound.
final class PurchaseOverlay: @unchecked Sendable {
    var cancelledAt: Recency? = nil
    var userAt: Recency? = nil
    var tokenAt: Recency? = nil

    /// Bytes an overlay allocates: its fields, the object header and the allocator's overhead.
    static let heapBytes = 16 + 3 * MemoryLayout<Recency?>.stride + 16

    func copy() -> PurchaseOverlay {
        let c = PurchaseOverlay()
        c.cancelledAt = cancelledAt
        c.userAt = userAt
        c.tokenAt = tokenAt
        return c
    }
}
