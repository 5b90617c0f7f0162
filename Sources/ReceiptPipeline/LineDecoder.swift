import ReceiptIO
import ReceiptModel
import ReceiptVerify

/// Where a record's row comes from: its source, line, record id and the digest of its receipt bytes. The source
/// and record id are views of the batch being processed, read before the next record is.
struct RowContext {
    var source: UnsafeRawBufferPointer
    var line: Int
    var recordID: UnsafeRawBufferPointer? = nil
    /// The SHA-256 of the receipt bytes (`receipt_sha256`), held by value.
    var receiptSHA256: SHA256Digest? = nil
    /// The `--device-id-field` value, read.
    var device = RecordDevice.absent
}

/// What became of an input line.
enum DecodedLine {
    /// The receipt bytes, in the caller's buffer.
    case receipt(UnsafeRawBufferPointer)
    /// Rejected before its receipt bytes (line too long, JSON, base64, empty).
    case failed(ErrorCode, Detail)
    /// The line holds JWS instead of a receipt (`JWSLine`): each one's text, or nil where an element that should
    /// be a JWS is not a string; empty when a JWS body held none.
    case jws([String?])
}

/// Turns one input line into receipt bytes: the NDJSON key scan (receipt and record id), JSON unescaping and
/// base64 decoding. Owns the unescape buffer, sized once for the largest record; decoding does not allocate.
final class LineDecoder {
    let scanner: NDJSONScanner
    /// The unescaped receipt string (consumed by base64 decoding before the next line is decoded).
    let unescaped: UnsafeMutableRawBufferPointer
    /// The column names of the field options for a CSV input, indexed by `CSVNamedField`.
    let csvNames: [String?]
    /// The row scanner of the CSV header last seen (one per input).
    var csv: CSVRowScanner? = nil

    init(field: String?, idField: String?, deviceIDField: String?, maxRecord: Int) {
        scanner = NDJSONScanner(field: field, idField: idField, deviceIDField: deviceIDField)
        unescaped = .allocate(byteCount: max(maxRecord, 1), alignment: 16)
        var names = [String?](repeating: nil, count: CSVNamedField.allCases.count)
        names[CSVNamedField.id.rawValue] = idField
        names[CSVNamedField.deviceID.rawValue] = deviceIDField
        csvNames = names
    }

    deinit { unescaped.deallocate() }

    /// The receipt bytes of `line` into `decoded` (at least `Base64.maxDecodedCount(line.count)` bytes), or the
    /// failure of the line's JSON or base64. Sets `ctx.recordID`, unescaped into `idScratch` when needed.
    func decode(
        _ line: UnsafeRawBufferPointer, _ format: RecordFormat, into decoded: UnsafeMutableRawBufferPointer,
        idScratch: UnsafeMutableRawBufferPointer, _ ctx: inout RowContext
    ) -> DecodedLine {
        var text = line
        if case .ndjson = format {
            let r = scanner.scan(line)
            ctx.recordID = Self.recordID(r.id, line, idScratch)
            if r.deviceID != .absent { ctx.device = Self.device(r.deviceID, line) }
            if let code = r.error {
                // Only a line without a receipt field that names a JWS body key takes the JSON parser.
                if code == .missingField && JWSLine.looksLikeBody(line) { return .jws(JWSLine.extract(line)) }
                // A bare JWS line among JSON lines is read by its own form, as in a file of bare lines.
                if code != .missingField && JWSDetector.isJWS(line) { return .jws([JWSLine.trimmed(line)]) }
                return .failed(code, .text(r.detail, at: r.errorOffset))
            }
            let raw = UnsafeRawBufferPointer(rebasing: line[r.receipt.range])
            if r.receipt.escaped {
                // In range: unescaping never lengthens, and raw.count <= line.count <= unescaped.count.
                let n = JSONString.unescape(raw, into: unescaped)
                text = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(unescaped)[0..<n])
            } else {
                text = raw
            }
        } else if case .csv(let header) = format {
            switch csvReceipt(line, header, idScratch: idScratch, &ctx) {
            case .failed(let failed): return failed
            case .text(let cell): text = cell
            }
        }
        if JWSLine.looksLikeCompact(text) { return .jws([String(decoding: text, as: UTF8.self)]) }
        let n: Int
        do throws(ReceiptError) {
            n = try Base64.decode(text, into: decoded)
        } catch {
            // A JWS the quick form check missed (surrounded by whitespace) fails base64 at its first `.`: read it.
            if JWSDetector.isJWS(text) { return .jws([JWSLine.trimmed(text)]) }
            // A JSON line in a file of bare lines (the first line decides the file's form) is read as NDJSON.
            if format == .base64 && Self.startsObject(text) {
                return decode(line, .ndjson, into: decoded, idScratch: idScratch, &ctx)
            }
            return .failed(.invalidBase64, Detail(error))
        }
        if n == 0 {
            return .failed(.emptyReceipt, .text("the receipt string holds only whitespace", at: -1))
        }
        return .receipt(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(decoded)[0..<n]))
    }

    /// True when the first byte of `text` that is not a space, tab or carriage return is `{`.
    static func startsObject(_ text: UnsafeRawBufferPointer) -> Bool {
        for b in text where b != 0x20 && b != 0x09 && b != 0x0D { return b == UInt8(ascii: "{") }
        return false
    }

    /// The `--device-id-field` value: absent for a JSON null; malformed for anything but a string in one of the
    /// accepted forms (`DeviceIdentifier`).
    static func device(_ v: JSONValue, _ line: UnsafeRawBufferPointer) -> RecordDevice {
        switch v {
        case .absent, .null:
            return .absent
        case .number, .bool, .container:
            return .malformed
        case .string(let ref):
            let raw = UnsafeRawBufferPointer(rebasing: line[ref.range])
            guard ref.escaped else { return DeviceIdentifier(text: raw).map { .identifier($0) } ?? .malformed }
            // Every accepted form is at most 36 characters, each at most 6 escaped bytes (`\u0041`).
            guard raw.count <= 216 else { return .malformed }
            return withUnsafeTemporaryAllocation(byteCount: 216, alignment: 1) { scratch in
                let n = JSONString.unescape(raw, into: scratch)
                let text = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[0..<n])
                return DeviceIdentifier(text: text).map { .identifier($0) } ?? .malformed
            }
        }
    }

    /// The text of the `--id-field` value: a string (unescaped into `scratch`), a number's literal, or a boolean.
    static func recordID(
        _ v: JSONValue, _ line: UnsafeRawBufferPointer, _ scratch: UnsafeMutableRawBufferPointer
    ) -> UnsafeRawBufferPointer? {
        switch v {
        case .string(let ref):
            let raw = UnsafeRawBufferPointer(rebasing: line[ref.range])
            guard ref.escaped else { return raw }
            let n = JSONString.unescape(raw, into: scratch)
            return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[0..<n])
        case .number(let range):
            return UnsafeRawBufferPointer(rebasing: line[range])
        case .bool(let b):
            let s: StaticString = b ? "true" : "false"
            return UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
        case .absent, .null, .container:
            return nil
        }
    }
}
