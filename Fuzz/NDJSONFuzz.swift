// libFuzzer entry for the NDJSON key scanner, JSON string unescaping and base64 (built by scripts/fuzz.sh).
// Every line must be classified (a receipt range inside the line, or an error code) without crashing, and the
// receipt string must unescape and decode within the buffers the pipeline sizes from the line length.
// A string the scanner accepts is copied into output columns (record_id), so it must unescape to valid UTF-8.

nonisolated(unsafe) let scanner = NDJSONScanner()
nonisolated(unsafe) let unescaped = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
nonisolated(unsafe) let decoded = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)

/// Unescapes `ref` (when it has escapes) into `unescaped` and returns the text.
func text(_ line: UnsafeRawBufferPointer, _ ref: JSONStringRef) -> UnsafeRawBufferPointer {
    precondition(ref.range.lowerBound >= 0 && ref.range.upperBound <= line.count, "string range outside the line")
    let raw = UnsafeRawBufferPointer(rebasing: line[ref.range])
    guard ref.escaped else { return raw }
    let n = JSONString.unescape(raw, into: unescaped)
    precondition(n <= raw.count, "unescaping lengthened the string")
    return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(unescaped)[0..<n])
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size <= unescaped.count else { return 0 }
    let line = UnsafeRawBufferPointer(start: data, count: size)
    let record = scanner.scan(line)
    if case .string(let ref) = record.id {
        precondition(String(validating: text(line, ref), as: UTF8.self) != nil, "an id string is not UTF-8")
    }
    guard record.error == nil else { return 0 }
    let receipt = text(line, record.receipt)
    precondition(String(validating: receipt, as: UTF8.self) != nil, "a receipt string is not UTF-8")
    let out = UnsafeMutableRawBufferPointer(rebasing: decoded[0..<Base64.maxDecodedCount(receipt.count)])
    if let n = try? Base64.decode(receipt, into: out) { precondition(n <= out.count) }
    return 0
}
