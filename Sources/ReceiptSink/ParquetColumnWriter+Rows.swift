import ReceiptModel

/// The row loops of `ParquetColumnWriter`: definition levels, values or dictionary indices, and statistics in one
/// pass over a slice of a column.
///
/// A page closes after the row that fills it (`pageBytes` of values plus indices, `maxRowsPerPage` rows, or a
/// dictionary past `dictionaryMaxBytes`). Each loop first works out how many rows cannot close the page and runs
/// those without the check, on local copies of the counters; the pages come out exactly as a row-at-a-time check
/// makes them.
extension ParquetColumnWriter {
    /// Rows from `r` (before `end`) that can be appended before the page needs checking: all but the last of them
    /// are certain not to fill it, given that each adds at most `bytesPerRow` to the page's byte count.
    @inline(__always)
    func rowsBeforeCheck(_ r: Int, _ end: Int, bytesPerRow: Int) -> Int {
        // An open page is below both limits (it is closed as soon as it reaches one), so both rooms are >= 0.
        let byteRoom = (pageBytes - (values.count + indexCount) - 1) / max(bytesPerRow, 1)
        let rowRoom = maxRowsPerPage - pageRows - 1
        return min(end - r, 1 + min(byteRoom, rowRoom))
    }

    /// Closes the page when it is full.
    @inline(__always)
    func closePageIfFull(_ zstd: ZstdCompressor) {
        if values.count + indexCount >= pageBytes || pageRows >= maxRowsPerPage { finishPage(zstd) }
    }

    /// Copies the validity bytes of `k` rows from `r` as definition levels (Bool is one byte, 0 or 1).
    @inline(__always)
    func appendLevels(_ valid: UnsafePointer<Bool>, _ r: Int, _ k: Int) {
        levels.append(UnsafeRawBufferPointer(start: valid + r, count: k))  // rows r..<r+k are within the column
    }

    // MARK: - Integers and timestamps

    func appendInts<T: FixedWidthInteger & BinaryIntegerOrBool>(
        _ col: PrimitiveColumn<T>, _ rows: Range<Int>, _ zstd: ZstdCompressor
    ) {
        precondition(col.count >= rows.upperBound)
        let width = MemoryLayout<T>.size
        withExtendedLifetime(col) {
            // In range: rows.upperBound <= col.count == values.count == valid.count.
            let vals = col.values.baseAddress!
            let valid = col.valid.baseAddress!
            var r = rows.lowerBound
            while r < rows.upperBound {
                let k = rowsBeforeCheck(r, rows.upperBound, bytesPerRow: width)
                if optional { appendLevels(valid, r, k) }
                values.reserve(k * width)
                var out = values.base + values.count
                // Without a value yet, the bounds start at the extremes: min/max per row then need no branch on
                // whether one was seen, and a run without values leaves min > max (no value).
                let has = stats.hasValue
                var s = (min: has ? stats.minInt : .max, max: has ? stats.maxInt : .min, nulls: stats.nullCount)
                for i in r..<(r + k) {
                    // REQUIRED columns hold no nulls (the assert); a null row there is written as its zero value.
                    assert(valid[i] || optional, "null in REQUIRED column \(spec.name)")
                    guard !optional || valid[i] else {
                        s.nulls += 1
                        continue
                    }
                    let v = vals[i]
                    out.storeBytes(of: v.littleEndian, as: T.self)  // reserved: `width` bytes per row of the run
                    out += width
                    let x = Int64(v)
                    s.min = Swift.min(s.min, x)
                    s.max = Swift.max(s.max, x)
                }
                values.count = out - values.base
                // Still no value: the extremes stored are never read (hasValue stays false).
                (stats.hasValue, stats.minInt, stats.maxInt, stats.nullCount) = (
                    has || s.min <= s.max, s.min, s.max, s.nulls
                )
                pageRows += k
                r += k
                closePageIfFull(zstd)
            }
        }
    }

    // MARK: - Booleans

    func appendBools(_ col: PrimitiveColumn<Bool>, _ rows: Range<Int>, _ zstd: ZstdCompressor) {
        precondition(col.count >= rows.upperBound)
        withExtendedLifetime(col) {
            // In range: rows.upperBound <= col.count == values.count == valid.count.
            let vals = col.values.baseAddress!
            let valid = col.valid.baseAddress!
            var r = rows.lowerBound
            while r < rows.upperBound {
                let k = rowsBeforeCheck(r, rows.upperBound, bytesPerRow: 1)
                if optional { appendLevels(valid, r, k) }
                values.reserve(k / 8 + 1)
                for i in r..<(r + k) {
                    assert(valid[i] || optional, "null in REQUIRED column \(spec.name)")
                    guard !optional || valid[i] else {
                        stats.nullCount += 1
                        continue
                    }
                    // PLAIN booleans: bit-packed LSB first, no header; a new byte every 8 values (reserved above).
                    if boolBits & 7 == 0 { values.store(0) }
                    if vals[i] {
                        let last = values.base + (values.count - 1)  // count >= 1: a byte was stored above
                        last.storeBytes(of: last.load(as: UInt8.self) | UInt8(1) << UInt8(boolBits & 7), as: UInt8.self)
                    }
                    boolBits += 1
                    stats.update(vals[i] ? 1 : 0)
                }
                pageRows += k
                r += k
                closePageIfFull(zstd)
            }
        }
    }

    // MARK: - Strings

    func appendStrings(_ col: StringColumn, _ rows: Range<Int>, _ zstd: ZstdCompressor) {
        precondition(col.count >= rows.upperBound)
        guard let bytes = col.bytes.baseAddress else { preconditionFailure("a string column without storage") }
        withExtendedLifetime(col) {
            // In range: rows.upperBound <= col.count, offsets has count + 1 entries, and the column only ever
            // appends whole values, so offsets[r] <= offsets[r + 1] <= bytes.count.
            let offs = col.offsets.baseAddress!
            let valid = col.valid.baseAddress!
            var r = rows.lowerBound
            while r < rows.upperBound {
                if dictionaryMode {
                    r = appendDictionaryRun(bytes, offs, valid, r, rows.upperBound)
                } else {
                    r = appendPlainRun(bytes, offs, valid, r, rows.upperBound)
                }
                let overDictionary = dictionaryMode && dictionary.byteSize > dictionaryMaxBytes
                if values.count + indexCount >= pageBytes || pageRows >= maxRowsPerPage || overDictionary {
                    finishPage(zstd)
                    // The dictionary gives way to PLAIN for the rest of the chunk.
                    if overDictionary { dictionaryMode = false }
                }
            }
        }
    }

    /// Dictionary-encodes rows from `r` until the page needs checking: up to `rowsBeforeCheck` rows, or through
    /// the row whose new entry takes the dictionary past its limit. Returns the next row.
    private func appendDictionaryRun(
        _ bytes: UnsafeRawPointer, _ offs: UnsafePointer<Int>, _ valid: UnsafePointer<Bool>, _ r: Int, _ end: Int
    ) -> Int {
        // Each row adds one index; a dictionary already past its limit (a limit below 0) closes the page at once.
        var k = rowsBeforeCheck(r, end, bytesPerRow: 1)
        if dictionary.byteSize > dictionaryMaxBytes { k = 1 }
        indices.reserve(k * 4)
        // indices holds only UInt32 values, at offsets that are multiples of 4 from a 16-aligned base.
        let out = (indices.base + indices.count).bindMemory(to: UInt32.self, capacity: k)
        var n = 0
        var done = k
        for i in r..<(r + k) {
            if optional && !valid[i] {
                stats.nullCount += 1
                continue
            }
            assert(valid[i], "null in REQUIRED column \(spec.name)")
            let v = UnsafeRawBufferPointer(start: bytes + offs[i], count: offs[i + 1] - offs[i])
            let (index, isNew) = dictionary.index(of: v)
            out[n] = index  // reserved: one per row of the run
            n += 1
            // Every value is either a new entry or equal to an old one: stats need only the new.
            if isNew {
                stats.update(v)
                if dictionary.byteSize > dictionaryMaxBytes {
                    done = i + 1 - r
                    break
                }
            }
        }
        if optional { appendLevels(valid, r, done) }
        indices.count += 4 * n
        indexCount += n
        pageRows += done
        return r + done
    }

    /// PLAIN-encodes rows from `r` until one fills the page (or `end`). Returns the next row.
    private func appendPlainRun(
        _ bytes: UnsafeRawPointer, _ offs: UnsafePointer<Int>, _ valid: UnsafePointer<Bool>, _ r: Int, _ end: Int
    ) -> Int {
        // Room for the whole rest of the slice: a length prefix and the bytes of every row.
        values.reserve(4 * (end - r) + (offs[end] - offs[r]))
        if optional { levels.reserve(end - r) }
        var i = r
        while i < end {
            if optional {
                let present = valid[i]
                levels.store(present ? 1 : 0)  // reserved above
                if !present {
                    stats.nullCount += 1
                    pageRows += 1
                    i += 1
                    if pageRows >= maxRowsPerPage { break }
                    continue
                }
            }
            assert(valid[i], "null in REQUIRED column \(spec.name)")
            let v = UnsafeRawBufferPointer(start: bytes + offs[i], count: offs[i + 1] - offs[i])
            values.storeLittleEndian(UInt32(truncatingIfNeeded: v.count))  // reserved above
            copyShort(into: values.base + values.count, from: v)  // reserved above
            values.count += v.count
            stats.update(v)
            pageRows += 1
            i += 1
            if values.count >= pageBytes || pageRows >= maxRowsPerPage { break }
        }
        return i
    }
}

/// Copies `src` to `dst`: values of up to 16 bytes with two overlapping word moves (most ids), longer ones by
/// memcpy. `dst` must have room for `src.count` bytes.
@inline(__always)
func copyShort(into dst: UnsafeMutableRawPointer, from src: UnsafeRawBufferPointer) {
    let n = src.count
    guard n > 0, let s = src.baseAddress else { return }
    if n >= 8 && n <= 16 {
        // In range: 8 <= n <= 16, so both words lie within the n bytes of each side.
        let a = s.loadUnaligned(as: UInt64.self)
        let b = s.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        dst.storeBytes(of: a, as: UInt64.self)
        dst.storeBytes(of: b, toByteOffset: n - 8, as: UInt64.self)
    } else if n >= 4 && n < 8 {
        // In range: 4 <= n < 8.
        let a = s.loadUnaligned(as: UInt32.self)
        let b = s.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        dst.storeBytes(of: a, as: UInt32.self)
        dst.storeBytes(of: b, toByteOffset: n - 4, as: UInt32.self)
    } else {
        dst.copyMemory(from: s, byteCount: n)
    }
}
