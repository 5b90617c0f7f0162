/// What a `RecordReader` keeps to let its zstd source decode straight into the batches (no copy out of libzstd's
/// window), and the rules that keep every back-reference libzstd follows inside bytes that are still there.
///
/// libzstd reads back-references from the current run of contiguous output (the segment) and the one run before
/// it. A batch's decoded bytes form one segment (the carried tail copied to its start is not part of it), so:
/// - the batch memory that holds the last segment is not filled again until the next segment has started: a batch
///   that comes back holding it (the pipeline's pool is LIFO; a single-batch caller passes the same batch every
///   time) gets a spare buffer instead (`protectHistory`);
/// - within a batch the reader never moves or overwrites decoded bytes (skipped lines are stepped over);
/// - a segment must cover the frame's window before the next one starts: a batch decodes only when its carry
///   leaves room for `windowLimit` bytes plus a block (`mayDecode`), and one that stops early keeps decoding
///   until the source no longer `needsLongerSegment`. Frames with larger windows are streamed as before.
final class InPlaceState {
    let zstd: ZstdByteSource
    /// The largest window decoded in place. A carried partial line (at most `maxRecordSize + 1` bytes) always
    /// leaves room for it and a block, so a batch that cannot decode always has a whole line to cut instead.
    let windowLimit: Int
    /// The buffer that received the last decoded bytes: libzstd may read from it until the next segment starts.
    private var history: BatchBuffer? = nil
    /// Given to a batch that arrives holding `history`.
    private var spare: BatchBuffer? = nil

    /// Nil when the options leave no room for in-place decoding (small test batches): the source then streams.
    init?(_ zstd: ZstdByteSource, _ options: ReaderOptions) {
        let limit = options.batchCapacity - ZstdByteSource.directRoom - (options.maxRecordSize + 1)
        guard limit > 0 else { return nil }
        self.zstd = zstd
        windowLimit = limit
        zstd.enableInPlace(windowLimit: limit)
    }

    /// Called before anything is written to `batch`: swaps its buffer for the spare if libzstd may still read it.
    func protectHistory(_ batch: RecordBatch) {
        guard let history, batch.buffer === history else { return }
        // The spare is never `history`: that buffer is in this batch.
        let replacement =
            spare.flatMap { $0.capacity == batch.capacity ? $0 : nil } ?? BatchBuffer(capacity: batch.capacity)
        spare = batch.exchangeBuffer(replacement)
    }

    /// Whether a batch whose carried tail is `carried` bytes may decode: its segment can then reach the window
    /// before less than a block of room is left.
    func mayDecode(carried: Int, capacity: Int) -> Bool {
        carried + windowLimit + ZstdByteSource.directRoom <= capacity
    }

    /// Records that the source decoded into `batch` during this fill.
    func decoded(into batch: RecordBatch) { history = batch.buffer }
}
