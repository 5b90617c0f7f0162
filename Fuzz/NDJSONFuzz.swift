// libFuzzer entry for the NDJSON key scanner, JSON string unescaping and base64 (built by scripts/fuzz.sh).
// Every line must be classified (a receipt range inside the line, or an error code) without crashing, and the
// receipt string must unescape and decode within the buffers the pipeline sizes from the line length.

nonisolated(unsafe) let scanner = NDJSONScanner()
nonisolated(unsafe) let unescaped = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
nonisolated(unsafe) let decoded = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size <= unescaped.count else { return 0 }
    let line = UnsafeRawBufferPointer(start: data, count: size)
    let record = scanner.scan(line)
    guard record.error == nil else { return 0 }
    precondition(record.receipt.range.upperBound <= size, "receipt range outside the line")
    var text = UnsafeRawBufferPointer(rebasing: line[record.receipt.range])
    if record.receipt.escaped {
        let n = JSONString.unescape(text, into: unescaped)
        precondition(n <= text.count, "unescaping lengthened the string")
        text = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(unescaped)[0..<n])
    }
    let out = UnsafeMutableRawBufferPointer(rebasing: decoded[0..<Base64.maxDecodedCount(text.count)])
    if let n = try? Base64.decode(text, into: out) { precondition(n <= out.count) }
    return 0
}
