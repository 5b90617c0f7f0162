#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A run's history state, opened as the base of another run: its format version and checksum checked and its
/// header read when opened (one pass over the file, before anything is written), its records streamed later by
/// the history merge (`stream`), a buffer at a time.
public final class HistoryStateFile: Sendable {
    public let path: String
    public let header: HistoryStateHeader
    /// The SHA-256 the file ends with, hexadecimal: the identity of the history it holds.
    public let checksum: String
    /// The file's size in bytes.
    public let byteCount: Int64

    private init(path: String, header: HistoryStateHeader, checksum: String, byteCount: Int64) {
        self.path = path
        self.header = header
        self.checksum = checksum
        self.byteCount = byteCount
    }

    /// Opens the state at `path`: refuses a file that is not a state, of another format version or record
    /// layout, or failing its checksum.
    public static func open(_ path: String) throws(HistoryStateError) -> HistoryStateFile {
        let scanner = try StateScanner(path: path)
        let size = scanner.size
        let prefix = HistoryStateFormat.magic.count + 4
        guard size >= Int64(prefix) else { throw HistoryStateError(.notState, path: path) }
        guard try scanner.read(HistoryStateFormat.magic.count) == HistoryStateFormat.magic else {
            throw HistoryStateError(.notState, path: path)
        }
        let version = try scanner.int32()
        guard version == HistoryStateFormat.version else {
            throw HistoryStateError(
                .foreignVersion, path: path,
                detail: "format version \(version); this version reads \(HistoryStateFormat.version)")
        }
        guard size >= Int64(prefix + 4 + 32) else { throw HistoryStateError(.checksumMismatch, path: path) }
        let digest = StateDigest()
        digest.update(HistoryStateFormat.magic)
        withUnsafeBytes(of: version.littleEndian) { digest.update($0) }
        try scanner.digest(upTo: size - 32, into: digest)
        let stored = try scanner.read(32)
        guard digest.finalize() == stored else { throw HistoryStateError(.checksumMismatch, path: path) }
        let again = try StateScanner(path: path)
        _ = try again.read(prefix)
        guard let headerBytes = try StateBody(again).frame() else {
            throw HistoryStateError(.damaged, path: path, detail: "it has no header")
        }
        let header = try HistoryStateHeader.decode(headerBytes, path: path)
        return HistoryStateFile(path: path, header: header, checksum: hexText(stored), byteCount: size)
    }

    /// Reads the records: each renewal info, then the purchases in row order, `chunk` at a time.
    func stream(
        chunk: Int = 4096, renewal: (RenewalRecord) throws(HistoryError) -> Void,
        purchases: ([PurchaseRecord]) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        let path = self.path
        func checked<T>(_ body: () throws(HistoryStateError) -> T) throws(HistoryError) -> T {
            do throws(HistoryStateError) { return try body() } catch {
                throw HistoryError(.spillDamaged, path: path, detail: error.message)
            }
        }
        let scanner = try checked { () throws(HistoryStateError) in
            let raw = try StateScanner(path: path)
            _ = try raw.read(HistoryStateFormat.magic.count + 4)
            let body = StateBody(raw)
            _ = try body.frame()
            return body
        }
        var renewals: Int64 = 0
        while let bytes = try checked({ () throws(HistoryStateError) in try scanner.frame() }) {
            try renewal(try checked { () throws(HistoryStateError) in try decode(bytes, as: RenewalRecord.self) })
            renewals += 1
        }
        var count: Int64 = 0
        var batch: [PurchaseRecord] = []
        batch.reserveCapacity(chunk)
        while let bytes = try checked({ () throws(HistoryStateError) in try scanner.frame() }) {
            batch.append(try checked { () throws(HistoryStateError) in try decode(bytes, as: PurchaseRecord.self) })
            count += 1
            if batch.count >= chunk {
                try purchases(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try purchases(batch) }
        let trailer = try checked { () throws(HistoryStateError) in try scanner.frame() }
        guard let trailer, trailer.count == 16 else {
            throw HistoryError(.spillDamaged, path: path, detail: "its trailer is missing")
        }
        let counts = trailer.withUnsafeBytes {
            (
                Int64(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: Int64.self)),
                Int64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: Int64.self))
            )
        }
        guard counts == (renewals, count) else {
            throw HistoryError(.spillDamaged, path: path, detail: "its record counts do not match its trailer")
        }
        try checked { () throws(HistoryStateError) in try scanner.finish() }
    }

    private func decode<R: SpillRecord>(_ bytes: [UInt8], as: R.Type) throws(HistoryStateError) -> R {
        let result: Result<R, HistoryError> = bytes.withUnsafeBytes { p in
            var r = SpillReader(p)
            do throws(HistoryError) {
                let record = try R.decode(&r)
                guard r.atEnd else { throw HistoryError(.spillDamaged, detail: "a record has bytes left over") }
                return .success(record)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let r): return r
        case .failure(let e): throw HistoryStateError(.damaged, path: path, detail: e.detail ?? "a record")
        }
    }
}

/// Reads a state file front to back through a buffer.
final class StateScanner {
    let path: String
    let size: Int64
    private var fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var start = 0
    private var end = 0

    init(path: String) throws(HistoryStateError) {
        self.path = path
        fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            if e == ENOENT { throw HistoryStateError(.missing, path: path) }
            throw HistoryStateError(.unreadable, path: path, detail: String(cString: strerror(e)))
        }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(fd)
            fd = -1
            throw HistoryStateError(.unreadable, path: path, detail: "not a regular file")
        }
        size = Int64(st.st_size)
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Reads more into the buffer; false at the end of the file.
    private func fill() throws(HistoryStateError) -> Bool {
        if start > 0 {
            let live = end - start
            buffer.withUnsafeMutableBytes { p in
                // live <= buffer.count: both ranges lie in the buffer.
                if live > 0 { p.baseAddress!.copyMemory(from: p.baseAddress! + start, byteCount: live) }
            }
            start = 0
            end = live
        }
        if end == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
        while true {
            let room = buffer.count - end
            let n = buffer.withUnsafeMutableBytes { p in Glibc.read(fd, p.baseAddress! + end, room) }
            if n < 0 {
                if errno == EINTR { continue }
                throw HistoryStateError(.unreadable, path: path, detail: String(cString: strerror(errno)))
            }
            end += n
            return n > 0
        }
    }

    /// Exactly `n` bytes.
    func read(_ n: Int) throws(HistoryStateError) -> [UInt8] {
        while end - start < n {
            if try !fill() { throw HistoryStateError(.damaged, path: path, detail: "it ends early") }
        }
        defer { start += n }
        return Array(buffer[start..<(start + n)])
    }

    func int32() throws(HistoryStateError) -> Int32 {
        let b = try read(4)
        return b.withUnsafeBytes { Int32(littleEndian: $0.loadUnaligned(as: Int32.self)) }
    }

    /// Feeds the bytes after the magic and version up to offset `limit` of the file into `digest` (call it right
    /// after reading those).
    func digest(upTo limit: Int64, into digest: StateDigest) throws(HistoryStateError) {
        var consumed = Int64(HistoryStateFormat.magic.count + 4)
        while consumed < limit {
            if start == end, try !fill() { throw HistoryStateError(.damaged, path: path, detail: "it ends early") }
            let take = Int(min(Int64(end - start), limit - consumed))
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[start..<(start + take)])) }
            start += take
            consumed += Int64(take)
        }
    }
}
