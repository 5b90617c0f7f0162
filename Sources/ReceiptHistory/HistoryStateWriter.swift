import ReceiptSink

/// Writes a run's history state (`HistoryStateFormat`) as the history merge emits its records: the renewal infos
/// first, then the purchases in row order. The file is staged like the tables (a temporary name, synced, renamed
/// into place or with the run's `CommitUnit`); an aborted writer leaves nothing. Blocks are compressed, digested
/// and written on a queue of their own (`HistoryWriteQueue`), in order, while the records go on being encoded.
final class HistoryStateWriter {
    private let file: StagedFile
    private let digest = StateDigest()
    private var w = SpillWriter()
    /// Compresses, digests and writes the body's blocks.
    private let blocks: HistoryWriteQueue<[UInt8]>
    private var renewals: Int64 = 0
    private var purchases: Int64 = 0
    private var inPurchases = false

    init(directory: String, unit: CommitUnit?, header: HistoryStateHeader) throws(HistoryError) {
        do throws(SinkError) {
            file = try StagedFile(directory: directory, name: HistoryStateFormat.fileName, unit: unit)
        } catch {
            throw HistoryError(error)
        }
        let file = self.file
        let digest = self.digest
        blocks = HistoryWriteQueue(label: "state", make: { [] }) { bytes throws(HistoryError) in
            let block = try StateBlocks.compress(bytes)
            digest.update(block)
            do throws(SinkError) {
                try file.write(block)
            } catch {
                throw HistoryError(error)
            }
            bytes.removeAll(keepingCapacity: true)
        }
        var prefix = SpillWriter()
        prefix.bytes.append(contentsOf: HistoryStateFormat.magic)
        prefix.i32(HistoryStateFormat.version)
        try writeRaw(prefix.bytes)
        frame { header.encode(into: &$0) }
    }

    /// The final path of the state file.
    var path: String { file.path }

    /// Bytes written so far (the whole file once committed).
    var bytesWritten: Int64 { file.bytesWritten }

    private func frame(_ body: (inout SpillWriter) -> Void) {
        let at = w.bytes.count
        w.i32(0)
        body(&w)
        let n = UInt32(w.bytes.count - at - 4).littleEndian
        withUnsafeBytes(of: n) { p in
            for i in 0..<4 { w.bytes[at + i] = p[i] }
        }
    }

    private func flushIfFull() throws(HistoryError) {
        if w.bytes.count >= 256 << 10 { try flush() }
    }

    /// Hands the buffered body bytes over to be written as one compressed block.
    private func flush() throws(HistoryError) {
        guard !w.bytes.isEmpty else { return }
        try blocks.hand(&w.bytes)
    }

    private func writeRaw(_ bytes: [UInt8]) throws(HistoryError) {
        digest.update(bytes)
        do throws(SinkError) {
            try file.write(bytes)
        } catch {
            throw HistoryError(error)
        }
    }

    /// The newest renewal info of one key (in key order, before any purchase).
    func add(_ r: RenewalRecord) throws(HistoryError) {
        guard !inPurchases else {
            throw HistoryError(.internalError, detail: "a renewal info was given to the state after a purchase")
        }
        appendFramed(r, into: &w)
        renewals += 1
        try flushIfFull()
    }

    /// One merged purchase (in row order).
    func add(_ p: PurchaseRecord) throws(HistoryError) {
        if !inPurchases {
            w.i32(0)
            inPurchases = true
        }
        appendFramed(p, into: &w)
        purchases += 1
        try flushIfFull()
    }

    /// Ends the sections, appends the trailer and the checksum, and commits the file.
    func commit() throws(HistoryError) {
        if !inPurchases {
            w.i32(0)
            inPurchases = true
        }
        w.i32(0)
        frame {
            $0.i64(renewals)
            $0.i64(purchases)
        }
        try flush()
        try blocks.wait()
        var end = SpillWriter()
        end.i32(0)
        try writeRaw(end.bytes)
        do throws(SinkError) {
            try file.write(digest.finalize())
            try file.commit()
        } catch {
            throw HistoryError(error)
        }
    }

    /// Removes the temporary file (once no block is being written to it).
    func abort() {
        blocks.settle()
        file.discard()
    }
}
