#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An append-only spill file with a write buffer. A short write (ENOSPC, EDQUOT) becomes a `HistoryError`
/// that names the full disk.
///
/// The file is open only while a full buffer is written: a store appends to one file per partition, and holding
/// them all open would cost a descriptor each for the whole run (64 or more, beyond a `ulimit -n` of 64 with the
/// rest of the run). One `open` per buffer of 64 KB or more costs nothing next to the write.
final class SpillAppender {
    let path: String
    private var buffer: [UInt8] = []
    private let limit: Int
    private let codec: SpillBlockCodec
    private(set) var bytesWritten: Int64 = 0

    /// Creates the file (empty when it is new; appended to when it exists).
    init(path: String, codec: SpillBlockCodec, bufferBytes: Int = 64 << 10) throws(HistoryError) {
        self.path = path
        self.codec = codec
        limit = bufferBytes
        let fd = try Self.open(path)
        Glibc.close(fd)
    }

    private static func open(_ path: String) throws(HistoryError) -> Int32 {
        while true {
            let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            if fd >= 0 { return fd }
            if errno != EINTR { throw HistoryError.system("cannot create the history spill file", path) }
        }
    }

    /// Appends whole framed records (`appendFramed`) as one compressed block; returns the bytes the block takes
    /// in the file.
    @discardableResult
    func append(_ records: [UInt8]) throws(HistoryError) -> Int { try append(records, using: codec) }

    /// `append` compressing with `codec` (the caller's, when the file's own is in use on another thread).
    @discardableResult
    func append(_ records: [UInt8], using codec: SpillBlockCodec) throws(HistoryError) -> Int {
        guard !records.isEmpty else { return 0 }
        let n = try codec.appendBlock(records, to: &buffer)
        if buffer.count >= limit { try flush() }
        return n
    }

    func flush() throws(HistoryError) {
        guard !buffer.isEmpty else { return }
        let fd = try Self.open(path)
        var done = 0
        let count = buffer.count
        var failure: Int32 = 0
        buffer.withUnsafeBytes { p in
            while done < count {
                let n = write(fd, p.baseAddress! + done, count - done)  // done < count: in range
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                done += n
            }
        }
        // A file system may report a failed write only when the file is closed (NFS).
        if Glibc.close(fd) != 0 && failure == 0 && errno != EINTR { failure = errno }
        bytesWritten += Int64(count)
        buffer.removeAll(keepingCapacity: true)
        if failure != 0 {
            errno = failure
            throw HistoryError.system("cannot write the history spill", path)
        }
    }

    /// Flushes and, when asked, syncs (a part's spill must survive a crash once the part is committed).
    func close(sync: Bool) throws(HistoryError) {
        try flush()
        guard sync else { return }
        let fd = try Self.open(path)
        defer { Glibc.close(fd) }
        if fsync(fd) != 0 && errno != EINVAL { throw HistoryError.system("cannot sync", path) }
    }
}

/// Reads a spill file record by record, one block at a time: the block's compressed bytes into the codec's
/// scratch (shared by the scanners of a merge, which read in turn), its records into this scanner's buffer.
final class SpillScanner<R: SpillRecord> {
    let path: String
    private var fd: Int32
    private let codec: SpillBlockCodec
    /// The current block's records; `start..<end` is what is left of them.
    private var records: [UInt8] = []
    private var start = 0
    private var end = 0

    init(path: String, codec: SpillBlockCodec) throws(HistoryError) {
        self.path = path
        self.codec = codec
        fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw HistoryError.system("cannot open the history spill", path) }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// The next record, or nil at the end of the file.
    func next() throws(HistoryError) -> R? {
        var order: [UInt8] = []
        return try next(order: &order)
    }

    /// The next record, or nil at the end of the file; for a type with an order prefix, its order key replaces the
    /// bytes of `order`.
    func next(order: inout [UInt8]) throws(HistoryError) -> R? {
        var record: R? = nil
        _ = try nextEncoded { b throws(HistoryError) in
            if R.hasOrderPrefix {
                let p = try SpillPrefixed(b)
                order.removeAll(keepingCapacity: true)
                order.append(contentsOf: p.order)
                record = try p.decode(as: R.self)
            } else {
                var body = SpillReader(b)
                record = try R.decode(&body)
                try finish(body)
            }
        }
        return record
    }

    /// Decodes the next record over `record` (reusing its storage); false at the end of the file. For a type with
    /// an order prefix, its order key replaces the bytes of `order`.
    func next(into record: inout R, order: inout [UInt8]) throws(HistoryError) -> Bool {
        try nextEncoded { b throws(HistoryError) in
            if R.hasOrderPrefix {
                let p = try SpillPrefixed(b)
                order.removeAll(keepingCapacity: true)
                order.append(contentsOf: p.order)
                try p.decode(into: &record)
            } else {
                var body = SpillReader(b)
                try R.decode(&body, into: &record)
                try finish(body)
            }
        }
    }

    /// Gives the next record's encoding, undecoded, to `body` (valid only during the call); false at the end of the
    /// file.
    func nextEncoded(_ body: (UnsafeRawBufferPointer) throws(HistoryError) -> Void) throws(HistoryError) -> Bool {
        while start == end {
            guard try readBlock() else { return false }
        }
        let failure: HistoryError? = records.withUnsafeBytes { p in
            do throws(HistoryError) {
                try body(try frame(p).bytes)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        return true
    }

    /// The next record's bytes (a record is framed by its length, so that one decoding short or long is noticed);
    /// moves past them.
    @inline(__always)
    private func frame(_ p: UnsafeRawBufferPointer) throws(HistoryError) -> SpillReader {
        var r = SpillReader(UnsafeRawBufferPointer(rebasing: p[start..<end]))
        let n = Int(try r.varint32())
        let body = SpillReader(try r.bytes(n))
        start += r.offset
        return body
    }

    @inline(__always)
    private func finish(_ body: SpillReader) throws(HistoryError) {
        if !body.atEnd { throw HistoryError(.spillDamaged, detail: "a record is longer than it reads") }
    }

    /// Reads and decompresses the next block; false at the end of the file.
    private func readBlock() throws(HistoryError) -> Bool {
        var header = [UInt8](repeating: 0, count: SpillFormat.headerBytes)
        let got = try readFully(&header, SpillFormat.headerBytes)
        if got == 0 { return false }
        guard got == SpillFormat.headerBytes else {
            throw HistoryError(.spillDamaged, path: path, detail: "it ends inside a block")
        }
        let count = header.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
        let stored = header.withUnsafeBytes {
            Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        }
        guard count > 0, count <= SpillFormat.maximumBlockBytes, stored <= SpillFormat.maximumBlockBytes else {
            throw HistoryError(.spillDamaged, path: path, detail: "a block's size is out of range")
        }
        if codec.scratch.count < stored { codec.scratch = [UInt8](repeating: 0, count: stored) }
        guard try readFully(&codec.scratch, stored) == stored else {
            throw HistoryError(.spillDamaged, path: path, detail: "it ends inside a block")
        }
        try codec.decompress(stored: stored, count: count, into: &records, path: path)
        start = 0
        end = count
        return true
    }

    /// Reads up to `count` bytes into the start of `buffer`; fewer only at the end of the file.
    private func readFully(_ buffer: inout [UInt8], _ count: Int) throws(HistoryError) -> Int {
        var done = 0
        var failure: Int32 = 0
        buffer.withUnsafeMutableBytes { p in
            while done < count {
                let n = read(fd, p.baseAddress! + done, count - done)  // done < count <= p.count
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { return }
                done += n
            }
        }
        if failure != 0 {
            errno = failure
            throw HistoryError.system("cannot read the history spill", path)
        }
        return done
    }
}

/// Appends `record` framed by its length as a little-endian uint32 (the history state file's framing).
func appendFramed<R: SpillRecord>(_ record: R, into w: inout SpillWriter) {
    let at = w.bytes.count
    w.i32(0)
    record.encode(into: &w)
    let n = UInt32(w.bytes.count - at - 4).littleEndian
    withUnsafeBytes(of: n) { p in
        for i in 0..<4 { w.bytes[at + i] = p[i] }
    }
}

/// Appends `record` framed by its length as a varint (the spill's framing), with its order prefix when its type
/// has one (`SpillPrefixed`); records are encoded into `scratch` first, their order keys into `key`.
func appendFramed<R: SpillRecord>(
    _ record: R, into w: inout SpillWriter, scratch: inout SpillWriter, key: inout [UInt8]
) {
    scratch.bytes.removeAll(keepingCapacity: true)
    if R.hasOrderPrefix {
        SpillPrefixed.append(record, to: &scratch, key: &key)
    } else {
        record.encode(into: &scratch)
    }
    w.varint(UInt64(scratch.bytes.count))
    w.bytes.append(contentsOf: scratch.bytes)
}
