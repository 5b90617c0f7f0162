#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The CSV side of the reader: the header check on the first line, and batches of whole CSV rows.
extension RecordReader {
    /// Reads the first line (up to `maxRecordSize`) into the carry and, when it is a CSV header naming a receipt
    /// field, takes it out and reads the rest of the input as CSV. Anything else stays in the carry for `fill`.
    /// `capacity` is the batches' (the carry's) size.
    func readHeader(capacity: Int) throws(InputError) {
        headerChecked = true
        guard !options.csvReceiptFields.isEmpty, line == 1 else { return }
        let limit = options.maxRecordSize + 2
        if carry == nil { carry = .allocate(byteCount: capacity, alignment: 64) }
        guard let carry else { return }
        var end: Int? = nil
        // In range: carryCount < limit <= options.batchCapacity <= capacity.
        while carryCount < limit {
            let n = try source.read(
                into: UnsafeMutableRawBufferPointer(start: carry + carryCount, count: limit - carryCount))
            if head != nil { try sniff(carry + carryCount, n) }
            if n == 0 {
                ended = true
                end = carryCount
                break
            }
            if let nl = memchr(carry + carryCount, 0x0A, n) {
                end = carry.distance(to: UnsafeMutableRawPointer(nl))
                carryCount += n
                break
            }
            carryCount += n
        }
        guard let end, end > 0 else { return }
        var start = 0
        if end >= 3 && carry.load(as: UInt8.self) == 0xEF && carry.load(fromByteOffset: 1, as: UInt8.self) == 0xBB
            && carry.load(fromByteOffset: 2, as: UInt8.self) == 0xBF
        {
            start = 3
        }
        var e = end
        if e > start && carry.load(fromByteOffset: e - 1, as: UInt8.self) == 0x0D { e -= 1 }
        let text = UnsafeRawBufferPointer(start: carry + start, count: e - start)
        guard let header = CSVHeader.detect(text, receiptFields: options.csvReceiptFields) else { return }
        format = .csv(header)
        line = 2
        // The header is no record: what follows its line feed stays for the first batch.
        let rest = carryCount - min(end + 1, carryCount)
        if rest > 0 { memmove(carry, carry + end + 1, rest) }
        carryCount = rest
    }

    /// `fill` for a CSV input: whole rows (a row may span lines inside quotes), numbered by the line they start on.
    /// A row longer than `maxRecordSize` becomes a `tooLarge` record and is dropped up to its end without being
    /// buffered (blank or not); a shorter line of only blanks between rows is counted, as in any input.
    func fillCSV(_ batch: RecordBatch, _ header: CSVHeader, consumedBefore: Int) throws(InputError) -> Bool {
        batch.format = .csv(header)
        let buf = batch.storage
        let cap = batch.capacity
        var filled = 0
        if carryCount > 0, let carry {
            // In range: carryCount <= cap (it came from a batch of the same capacity, or from `readHeader`).
            buf.copyMemory(from: carry, byteCount: carryCount)
            filled = carryCount
            carryCount = 0
        }
        let maxRecords = options.maxRecordsPerBatch
        let maxSize = options.maxRecordSize
        let target = min(options.batchBytes, cap)
        let step = 64 << 10
        var rowStart = 0
        var scanned = 0
        var state = CSVFramer.State.fieldStart
        var newlines = 0
        var full = false

        scanning: while true {
            while scanned < filled {
                if csvSkipping {
                    // Line feeds inside the dropped row's quotes count as lines; its bytes are dropped. Locals, not
                    // the reader's properties, are passed inout, which keeps the properties' access checks static.
                    var skipState = csvSkipState
                    var skippedLines = 0
                    let found = CSVFramer.rowEnd(
                        buf, from: scanned, to: filled, state: &skipState, newlines: &skippedLines)
                    csvSkipState = skipState
                    line += skippedLines
                    guard let end = found else {
                        filled = rowStart
                        scanned = rowStart
                        break
                    }
                    let rest = filled - (end + 1)
                    if rest > 0 { memmove(buf + rowStart, buf + end + 1, rest) }
                    filled = rowStart + rest
                    scanned = rowStart
                    csvSkipping = false
                    line += 1
                    continue
                }
                guard let end = CSVFramer.rowEnd(buf, from: scanned, to: filled, state: &state, newlines: &newlines)
                else {
                    scanned = filled
                    // A row may be one byte over the limit while still unfinished: its last byte may be a `\r`.
                    if filled - rowStart > maxSize + 1 {
                        if line > skipThroughLine {
                            batch.records.append(RecordSpan(offset: rowStart, length: 0, line: line, tooLarge: true))
                        }
                        line += newlines
                        newlines = 0
                        csvSkipping = true
                        csvSkipState = state
                        state = .fieldStart
                        filled = rowStart
                        scanned = rowStart
                        if batch.records.count == maxRecords {
                            full = true
                            break scanning
                        }
                    }
                    break
                }
                cutRow(batch, buf, rowStart, end, newlines: newlines)
                rowStart = end + 1
                scanned = rowStart
                state = .fieldStart
                newlines = 0
                if batch.records.count == maxRecords {
                    full = true
                    break scanning
                }
            }
            if ended { break }
            if filled == cap || rowStart >= target {
                full = true
                break
            }
            let end = filled < target ? target : min(cap, filled + step)
            let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buf + filled, count: end - filled))
            if head != nil { try sniff(buf + filled, n) }
            if n == 0 { ended = true } else { filled += n }
        }
        if full {
            // An unfinished row is scanned again from its start by the next batch.
            carryTail(buf + rowStart, filled - rowStart, capacity: cap)
        } else if csvSkipping {
            // A dropped row that the input ends inside: its record is out, so the row is done.
            csvSkipping = false
            line += 1
        } else if filled > rowStart {
            // The last row may lack its line feed (or its closing quote: the splitter then rejects it).
            cutRow(batch, buf, rowStart, filled, newlines: newlines)
        }
        batch.inputBytes = source.bytesConsumed - consumedBefore
        // A row being dropped already has its record; otherwise the counter is one past the last line.
        batch.endLine = max(csvSkipping ? line : line - 1, 0)
        return !batch.records.isEmpty || batch.blankLines > 0 || batch.inputBytes > 0 || !ended || carryCount > 0
    }

    /// Records the row `buf[start..<end]` (terminator excluded), which holds `newlines` quoted line feeds, and
    /// advances the line counter past it.
    private func cutRow(_ batch: RecordBatch, _ buf: UnsafeMutableRawPointer, _ start: Int, _ end: Int, newlines: Int) {
        defer { line += newlines + 1 }
        var e = end
        // In range: start <= e - 1 < end <= capacity.
        if e > start && buf.load(fromByteOffset: e - 1, as: UInt8.self) == 0x0D { e -= 1 }
        guard line > skipThroughLine else { return }
        // Size first: a row is too large however it ends, so a row cut before or after its end agrees.
        if e - start > options.maxRecordSize {
            batch.records.append(RecordSpan(offset: start, length: 0, line: line, tooLarge: true))
            return
        }
        if newlines == 0 && Self.firstNonBlank(buf, start, e) == e {
            batch.blankLines += 1
            return
        }
        batch.records.append(RecordSpan(offset: start, length: e - start, line: line))
    }
}
